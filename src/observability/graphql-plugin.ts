import type { GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { type DocumentNode, getOperationAST, type OperationDefinitionNode } from 'graphql';
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { metrics } from './metrics.js';
import { operationLabel } from './operation-names.js';
import type { FastifyRequest } from 'fastify';
import { observationOf, observationOfContext, type RequestObservation } from './request-observation.js';
import { tracer, tracingEnabled } from './tracing.js';

const OBSERVATION = Symbol('request observation');

/**
 * Puts the request's observation on its GraphQL context itself. Apollo runs each operation on a copy
 * of the context (Object.assign onto a new object), which a lookup by the original object misses:
 * /graphql log lines went out without their operation's name. Own enumerable properties, symbols
 * included, are copied.
 */
export function carryObservation<C extends object>(contextValue: C, request: FastifyRequest): C {
  (contextValue as Record<symbol, unknown>)[OBSERVATION] = observationOf(request);
  return contextValue;
}

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

  constructor(contextValue: object) {
    this.observation =
      ((contextValue as Record<symbol, unknown>)[OBSERVATION] as RequestObservation | undefined) ??
      observationOfContext(contextValue);
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
