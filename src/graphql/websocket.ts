import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { specifiedRules, validate } from 'graphql';
import type { Config } from '../config.js';
import { credentialFrom, type GraphQLContext, type RequestFacts, routerSecretFrom } from './context.js';
import { webSocketValidationRules } from './hardening.js';

export interface WebSocketOptions {
  schema: GraphQLSchema;
  config: Config;
  contextFor: (facts: RequestFacts) => Promise<GraphQLContext>;
}

/**
 * graphql-ws on the same port and path as HTTP GraphQL. The credential comes from
 * `connectionParams` (`x-api-key`, `apiKey` or `authorization`) or else the upgrade request's headers.
 */
export function registerWebSocket(app: FastifyInstance, { schema, config, contextFor }: WebSocketOptions): void {
  const rules = webSocketValidationRules(config);
  const wss = new WebSocketServer({ server: app.server, path: '/graphql' });
  const server = useServer<Record<string, unknown>, { credential?: string; requestId?: string }>(
    {
      schema,
      validate: (validationSchema, document) => validate(validationSchema, document, [...specifiedRules, ...rules]),
      onConnect: (ctx) => {
        const params = Object.fromEntries(Object.entries(ctx.connectionParams ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
        const fromParams = credentialFrom({
          'x-api-key': typeof params['x-api-key'] === 'string' ? params['x-api-key'] : typeof params['apikey'] === 'string' ? params['apikey'] : undefined,
          authorization: typeof params['authorization'] === 'string' ? params['authorization'] : undefined,
        });
        const credential = fromParams ?? credentialFrom(ctx.extra.request.headers);
        if (credential) ctx.extra.credential = credential;
        ctx.extra.requestId = randomUUID();
        return true;
      },
      context: (ctx) =>
        contextFor({
          credential: ctx.extra.credential,
          requestId: ctx.extra.requestId ?? randomUUID(),
          clientIp: ctx.extra.request.socket.remoteAddress ?? 'unknown',
          routerSecret: routerSecretFrom(ctx.extra.request.headers),
        }),
    },
    wss,
  );
  app.addHook('onClose', async () => {
    await server.dispose();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
