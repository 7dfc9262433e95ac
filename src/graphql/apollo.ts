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
import { operationGuardsPlugin } from './operation-guards.js';
import { oneValueMovingFieldPerKey } from './value-moving.js';
import { registerPages } from '../http/security-headers.js';
import { routeOperation } from '../db/pool-routing.js';
import { observabilityPlugin } from '../observability/graphql-plugin.js';

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
      ...(armor.plugins as ApolloServerPlugin<GraphQLContext>[]),
      operationGuardsPlugin<GraphQLContext>(),
      fastifyApolloDrainPlugin(app),
      observabilityPlugin<GraphQLContext>(),
      oneValueMovingFieldPerKey(),
      // A POST query reads through the read pool; a mutation keeps the request pool.
      {
        requestDidStart: async () => ({
          didResolveOperation: async ({ operation }) => {
            if (operation) routeOperation(operation.operation);
          },
        }),
      },
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
  const context = (request: FastifyRequest) => contextFor(request);
  await app.register(fastifyApollo(apollo), { path: '/graphql', method: ['POST', 'OPTIONS'], context });

  const queryOverGet = fastifyApolloHandler(apollo, { context });
  if (config.GRAPHQL_EXPLORER) await registerPages(app, registerExplorer);
  app.get('/graphql', { schema: { hide: true } }, (request, reply) => {
    if (config.GRAPHQL_EXPLORER && wantsExplorer(request)) return reply.redirect('/graphql/explorer/');
    return queryOverGet.call(app, request as never, reply as never);
  });
}
