import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { credentialFrom, type GraphQLContext } from './context.js';

export interface WebSocketOptions {
  schema: GraphQLSchema;
  contextFor: (credential: string | undefined, requestId: string) => Promise<GraphQLContext>;
}

/**
 * graphql-ws on the same port and path as HTTP GraphQL. The credential comes from
 * `connectionParams` (`x-api-key`, `apiKey` or `authorization`) or else the upgrade request's headers.
 */
export function registerWebSocket(app: FastifyInstance, { schema, contextFor }: WebSocketOptions): void {
  const wss = new WebSocketServer({ server: app.server, path: '/graphql' });
  const server = useServer<Record<string, unknown>, { credential?: string; requestId?: string }>(
    {
      schema,
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
      context: (ctx) => contextFor(ctx.extra.credential, ctx.extra.requestId ?? randomUUID()),
    },
    wss,
  );
  app.addHook('onClose', async () => {
    await server.dispose();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
