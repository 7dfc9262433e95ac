import type { GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { type DocumentNode, getOperationAST, type OperationDefinitionNode } from 'graphql';
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { metrics } from './metrics.js';
import { operationLabel } from './operation-names.js';
import { observationOfContext, type RequestObservation } from './request-observation.js';
import { tracer, tracingEnabled } from './tracing.js';

/**
 * What one GraphQL request reports: counts operations by name and outcome (ok, error: the result
 * carries errors, invalid: it never ran), times them, names the operation on the request's log
 * line, and wraps execution in a span when tracing is on. The request plugin in
 * graphql/apollo.ts calls it from Apollo's hooks; nothing here is async.
 */
export class OperationObservation {
  private readonly started = performance.now();
  private readonly observation: RequestObservation | undefined;
  private name: string | undefined;
  private type = 'unknown';
  private span: Span | undefined;
  private executed = false;

  /**
   * The request's observation rides on the GraphQL context itself (linkContext): Apollo runs each
   * operation on a copy of the context (Object.assign onto a new object), which keeps own
   * properties, symbols included, where a lookup by the original object would miss.
   */
  constructor(contextValue: object) {
    this.observation = observationOfContext(contextValue);
  }

  /** Named at validation too, so an operation that fails validation is still counted under its name. */
  validating(document: DocumentNode, operationName: string | null | undefined): void {
    const operation = getOperationAST(document, operationName);
    this.name = operation?.name?.value;
    this.type = operation?.operation ?? this.type;
  }

  resolved(operationName: string | null, operation: OperationDefinitionNode | undefined): void {
    this.name = operationName ?? undefined;
    this.type = operation?.operation ?? 'unknown';
    if (this.observation) this.observation.operation = this.name ?? `(anonymous ${this.type})`;
  }

  executing(): void {
    this.executed = true;
    if (!tracingEnabled()) return;
    this.span = tracer().startSpan(`graphql.${this.type} ${this.name ?? 'anonymous'}`, {
      attributes: { 'graphql.operation.type': this.type, 'graphql.operation.name': this.name ?? '' },
    });
  }

  finished({ response, errors }: Pick<GraphQLRequestContextWillSendResponse<object>, 'response' | 'errors'>): void {
    const failed =
      (errors?.length ?? 0) > 0 ||
      (response.body.kind === 'single' && (response.body.singleResult.errors?.length ?? 0) > 0);
    const outcome = !this.executed ? 'invalid' : failed ? 'error' : 'ok';
    metrics.graphqlOperations.inc({ operation: operationLabel(this.name), type: this.type, outcome });
    metrics.graphqlDuration.observe({ type: this.type, outcome }, (performance.now() - this.started) / 1000);
    if (this.span) {
      if (failed) this.span.setStatus({ code: SpanStatusCode.ERROR });
      this.span.end();
    }
  }
}
