import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo, { fastifyApolloDrainPlugin, fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import type { GraphQLContext } from './context.js';
import { registerExplorer, wantsExplorer } from './explorer.js';
import { createFormatError } from './format-error.js';
import { createArmor, parseOptionsOf } from './hardening.js';
import { countQueryLimits } from './directives/operation-limits.js';
import { operationRefusal } from './operation-guards.js';
import { valueMovingRefusal } from './value-moving.js';
import { registerPages } from '../http/security-headers.js';
import { routeOperation } from '../db/pool-routing.js';
import { OperationObservation } from '../observability/graphql-plugin.js';

export interface ApolloOptions {
  schema: GraphQLSchema;
  config: Config;
  contextFor: (request: FastifyRequest) => Promise<GraphQLContext>;
}

/**
 * Apollo Server at /graphql, sharing the context builder with REST and WebSocket. A browser that
 * GETs /graphql gets the offline explorer (when enabled); any other GET is a GraphQL query.
 */
export async function registerApollo(
  app: FastifyInstance,
  { schema, config, contextFor }: ApolloOptions,
): Promise<void> {
  const development = config.NODE_ENV === 'development';
  const armor = createArmor(config);
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    plugins: [
      requestPlugin(schema, armor.plugins as ApolloServerPlugin<GraphQLContext>[]),
      fastifyApolloDrainPlugin(app),
      // Inline tracing is for Apollo's hosted studio, which this deployment does not report to;
      // the landing page loads from a CDN, so the explorer below replaces it.
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginLandingPageDisabled(),
      // The schema declares no @cacheControl hints, so responses never carried a Cache-Control
      // header from it; the plugin only wrapped every field's resolver to compute a policy of none.
      ApolloServerPluginCacheControlDisabled(),
    ],
    validationRules: armor.validationRules,
    // The token limit is enforced by graphql-js's own parser, so a document over it is a parse
    // error like any other: HTTP 400 GRAPHQL_PARSE_FAILED.
    parseOptions: parseOptionsOf(config),
    formatError: createFormatError(development, (error) => app.log.error({ err: error }, 'unhandled GraphQL error')),
    includeStacktraceInErrorResponses: development,
    introspection: config.GRAPHQL_INTROSPECTION,
    hideSchemaDetailsFromClientErrors: !config.GRAPHQL_INTROSPECTION,
    csrfPrevention: true,
    allowBatchedHttpRequests: config.GRAPHQL_BATCHING,
    // Shutdown is main.ts's: Apollo's own SIGTERM handler would close the listener at once,
    // before readiness has turned and in-flight requests have finished.
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  // contextFor ties the context to its request's observation (linkContext), which Apollo's copy keeps.
  const context = contextFor;
  await app.register(fastifyApollo(apollo), { path: '/graphql', method: ['POST', 'OPTIONS'], context });

  const queryOverGet = fastifyApolloHandler(apollo, { context });
  if (config.GRAPHQL_EXPLORER) await registerPages(app, registerExplorer);
  app.get('/graphql', { schema: { hide: true } }, (request, reply) => {
    if (config.GRAPHQL_EXPLORER && wantsExplorer(request)) return reply.redirect('/graphql/explorer/');
    return queryOverGet.call(app, request as never, reply as never);
  });
}

/**
 * Everything the gateway does around an operation, in one plugin (each plugin costs Apollo a
 * listener and a promise per hook per request):
 * - observation: metrics, the operation's name on the log line, a span when tracing is on;
 * - before anything executes: refused text and subscriptions over HTTP (operation-guards.ts),
 *   then two value-moving fields under one Idempotency-Key (value-moving.ts);
 * - a POST query reads through the read pool; a mutation keeps the request pool;
 * - a query's root fields are counted against the rate limits at once (operation-limits.ts);
 * - graphql-armor's own hooks (field-suggestion masking) run only when there are errors to mask.
 */
const DONE: Promise<void> = Promise.resolve();

function requestPlugin(
  schema: GraphQLSchema,
  armorPlugins: ApolloServerPlugin<GraphQLContext>[],
): ApolloServerPlugin<GraphQLContext> {
  return {
    // The hooks are plain functions where nothing is awaited, answering one settled promise: Apollo
    // awaits whatever they return, and an async function costs a promise (and, with an async-local
    // store in the process, a copy of it) per hook per request.
    requestDidStart({ contextValue }) {
      const observed = new OperationObservation(contextValue);
      return Promise.resolve({
        validationDidStart({ document, request }) {
          observed.validating(document, request.operationName);
          return DONE;
        },
        didResolveOperation({ document, request, operation, operationName, contextValue }) {
          observed.resolved(operationName, operation);
          const refused =
            operationRefusal(document, request, operation) ?? valueMovingRefusal(contextValue, operation, document);
          if (refused) return Promise.reject(refused);
          if (!operation) return DONE;
          routeOperation(operation.operation);
          return countQueryLimits(schema, contextValue, document, operation, request.variables) ?? DONE;
        },
        executionDidStart() {
          observed.executing();
          return DONE;
        },
        async didEncounterErrors(requestContext) {
          for (const plugin of armorPlugins) {
            const listener = await plugin.requestDidStart?.(requestContext as never);
            await listener?.didEncounterErrors?.(requestContext);
          }
        },
        willSendResponse(requestContext) {
          observed.finished(requestContext);
          return DONE;
        },
      });
    },
  };
}
