import type { ApolloServerPlugin } from '@apollo/server';
import { getOperationAST } from 'graphql';
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { metrics } from './metrics.js';
import { operationLabel } from './operation-names.js';
import { observationOfContext } from './request-observation.js';
import { tracer, tracingEnabled } from './tracing.js';

/**
 * Apollo plugin: counts GraphQL operations by name and outcome (ok, error: the result carries
 * errors, invalid: it never ran), times them, names the operation on the request's log line, and
 * wraps execution in a span.
 */
export function observabilityPlugin<C extends object>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart({ contextValue }) {
      const started = performance.now();
      const observation = observationOfContext(contextValue);
      let name: string | undefined;
      let type = 'unknown';
      let span: Span | undefined;
      let executed = false;
      return {
        // Named here too, so an operation that fails validation is still counted under its name.
        async validationDidStart({ document, request }) {
          const operation = getOperationAST(document, request.operationName);
          name = operation?.name?.value;
          type = operation?.operation ?? type;
        },
        async didResolveOperation({ operationName, operation }) {
          name = operationName ?? undefined;
          type = operation?.operation ?? 'unknown';
          if (observation) observation.operation = name ?? `(anonymous ${type})`;
        },
        async executionDidStart() {
          executed = true;
          if (!tracingEnabled()) return;
          span = tracer().startSpan(`graphql.${type} ${name ?? 'anonymous'}`, {
            attributes: { 'graphql.operation.type': type, 'graphql.operation.name': name ?? '' },
          });
        },
        async willSendResponse({ response, errors }) {
          const failed =
            (errors?.length ?? 0) > 0 ||
            (response.body.kind === 'single' && (response.body.singleResult.errors?.length ?? 0) > 0);
          const outcome = !executed ? 'invalid' : failed ? 'error' : 'ok';
          metrics.graphqlOperations.inc({ operation: operationLabel(name), type, outcome });
          metrics.graphqlDuration.observe({ type, outcome }, (performance.now() - started) / 1000);
          if (span) {
            if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
          }
        },
      };
    },
  };
}
