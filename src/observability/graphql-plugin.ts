import type { GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { type DocumentNode, getOperationAST, type OperationDefinitionNode } from 'graphql';
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { metrics } from './metrics.js';
import { type OperationCaller, operationLabel } from './operation-names.js';
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
  /** The authenticated caller (GraphQLContext.principal), whose credential may make its names labels. */
  private readonly caller: OperationCaller | null | undefined;
  private name: string | undefined;
  private type = 'unknown';
  private span: Span | undefined;
  private executed = false;
  /** The document of an operation that began validation and was not (yet) resolved. */
  private validated: { document: DocumentNode; operationName: string | null | undefined } | undefined;

  /**
   * The request's observation rides on the GraphQL context itself (linkContext): Apollo runs each
   * operation on a copy of the context (Object.assign onto a new object), which keeps own
   * properties, symbols included, where a lookup by the original object would miss.
   */
  constructor(contextValue: object) {
    this.observation = observationOfContext(contextValue);
    this.caller = (contextValue as { principal?: OperationCaller | null }).principal;
  }

  /**
   * Named at validation too, so an operation that fails validation is still counted under its
   * name: the document is kept and read only if the operation is never resolved (most are).
   */
  validating(document: DocumentNode, operationName: string | null | undefined): void {
    this.validated = { document, operationName };
  }

  resolved(operationName: string | null, operation: OperationDefinitionNode | undefined): void {
    this.validated = undefined;
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
    if (this.validated) {
      const operation = getOperationAST(this.validated.document, this.validated.operationName);
      this.name = operation?.name?.value;
      this.type = operation?.operation ?? this.type;
    }
    const failed =
      (errors?.length ?? 0) > 0 ||
      (response.body.kind === 'single' && (response.body.singleResult.errors?.length ?? 0) > 0);
    const outcome = !this.executed ? 'invalid' : failed ? 'error' : 'ok';
    countOperation(
      operationLabel(this.name, this.caller),
      this.type,
      outcome,
      (performance.now() - this.started) / 1000,
    );
    if (this.span) {
      if (failed) this.span.setStatus({ code: SpanStatusCode.ERROR });
      this.span.end();
    }
  }
}

/**
 * One operation in gateway_graphql_operations_total and gateway_graphql_operation_duration_seconds,
 * labelled as prom-client's Counter and Histogram were (operation, type, outcome; type, outcome).
 * Operation labels are bounded and well formed (operation-names.ts), types and outcomes are words,
 * so a space-joined key names one label set.
 */
function countOperation(operation: string, type: string, outcome: string, seconds: number): void {
  const durationKey = `${type} ${outcome}`;
  const countKey = `${operation} ${durationKey}`;
  const { graphqlOperations, graphqlDuration } = metrics;
  const counted = graphqlOperations.find(countKey) ?? graphqlOperations.add(countKey, { operation, type, outcome });
  counted.value += 1;
  const timed = graphqlDuration.find(durationKey) ?? graphqlDuration.add(durationKey, { type, outcome });
  timed.observe(seconds);
}
