import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { GraphQLContext } from './context.js';
import { createFormatError } from './format-error.js';

export interface ApolloOptions {
  schema: GraphQLSchema;
  contextFor: (request: FastifyRequest) => Promise<GraphQLContext>;
  development: boolean;
}

/** Apollo Server at POST/GET /graphql, sharing the context builder with REST and WebSocket. */
export async function registerApollo(app: FastifyInstance, { schema, contextFor, development }: ApolloOptions): Promise<void> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    // Inline tracing is for Apollo's hosted studio, which this deployment does not report to.
    plugins: [fastifyApolloDrainPlugin(app), ApolloServerPluginInlineTraceDisabled()],
    formatError: createFormatError(development, (error) => app.log.error({ err: error }, 'unhandled GraphQL error')),
    includeStacktraceInErrorResponses: development,
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
  });
  await apollo.start();
  await app.register(fastifyApollo(apollo), { path: '/graphql', context: (request) => contextFor(request) });
}
