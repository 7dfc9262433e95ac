import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { type WebSocket, WebSocketServer } from 'ws';
import { specifiedRules, validate } from 'graphql';
import type { Config } from '../config.js';
import { credentialFrom, type GraphQLContext, type RequestFacts, routerSecretFrom } from './context.js';
import { webSocketValidationRules } from './hardening.js';
import { createSharedSubscribe } from './shared-subscriptions.js';
import { serveGraphQLWs } from './ws-transport.js';
import { subscriptionHooks } from '../observability/subscription-hooks.js';

export interface WebSocketOptions {
  schema: GraphQLSchema;
  config: Config;
  contextFor: (facts: RequestFacts) => Promise<GraphQLContext>;
  /** Whether a credential is still valid; connections whose credential stops being valid are closed. */
  stillValid: (credential: string) => Promise<boolean>;
  recheckMs?: number;
}

/** Close code for a connection whose key or token was revoked (4401, as graphql-ws uses for Unauthorized). */
const CLOSE_CREDENTIAL_REVOKED = 4401;

/**
 * graphql-ws on the same port and path as HTTP GraphQL. The credential comes from
 * `connectionParams` (`x-api-key`, `apiKey` or `authorization`) or else the upgrade request's headers.
 */
export function registerWebSocket(
  app: FastifyInstance,
  { schema, config, contextFor, stillValid, recheckMs = 1000 }: WebSocketOptions,
): void {
  const rules = webSocketValidationRules(config);
  const authenticated = new Map<WebSocket, string>();
  // A revocation reaches live connections too: each credential is checked again every second.
  const recheck = setInterval(() => {
    for (const [socket, credential] of authenticated) {
      stillValid(credential)
        .then((valid) => {
          if (!valid) {
            authenticated.delete(socket);
            socket.close(CLOSE_CREDENTIAL_REVOKED, 'Unauthorized: the credential was revoked');
          }
        })
        .catch(() => undefined);
    }
  }, recheckMs);
  recheck.unref();
  const wss = new WebSocketServer({ server: app.server, path: '/graphql' });
  const server = serveGraphQLWs<Record<string, unknown>, { credential?: string; requestId?: string }>(
    {
      schema,
      subscribe: createSharedSubscribe(),
      validate: (validationSchema, document) => validate(validationSchema, document, [...specifiedRules, ...rules]),
      onConnect: async (ctx) => {
        const params = Object.fromEntries(
          Object.entries(ctx.connectionParams ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
        );
        const fromParams = credentialFrom({
          'x-api-key':
            typeof params['x-api-key'] === 'string'
              ? params['x-api-key']
              : typeof params['apikey'] === 'string'
                ? params['apikey']
                : undefined,
          authorization: typeof params['authorization'] === 'string' ? params['authorization'] : undefined,
        });
        const credential = fromParams ?? credentialFrom(ctx.extra.request.headers);
        ctx.extra.requestId = randomUUID();
        if (credential) {
          // A credential that is already invalid is refused at the door (graphql-ws closes with 4403).
          if (!(await stillValid(credential))) return false;
          ctx.extra.credential = credential;
          authenticated.set(ctx.extra.socket, credential);
        }
        return true;
      },
      onOperation: subscriptionHooks.onOperation,
      onComplete: subscriptionHooks.onComplete,
      onClose: (ctx) => {
        authenticated.delete(ctx.extra.socket);
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
    { isProduction: config.NODE_ENV === 'production' },
  );
  app.addHook('onClose', async () => {
    clearInterval(recheck);
    await server.dispose();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
