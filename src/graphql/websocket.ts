import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { type WebSocket, WebSocketServer } from 'ws';
import { GraphQLError, parse, specifiedRules, validate } from 'graphql';
import type { Config } from '../config.js';
import { userAgentOf } from '../domain/audit/request-context.js';
import { credentialFrom, type GraphQLContext, originFrom, type RequestFacts, routerSecretFrom } from './context.js';
import { credentialLimitRefusal } from './credential-limits.js';
import { trustedDocumentOf } from './trusted-document-gate.js';
import { createFormatError } from './format-error.js';
import { parseOptionsOf, webSocketValidationRules } from './hardening.js';
import { asRequestError, operationTextProblem } from './operation-guards.js';
import { createSharedSubscribe } from './shared-subscriptions.js';
import { serveGraphQLWs, type WsExtra } from './ws-transport.js';
import { subscriptionHooks } from '../observability/subscription-hooks.js';

export interface WebSocketOptions {
  schema: GraphQLSchema;
  config: Config;
  contextFor: (facts: RequestFacts) => Promise<GraphQLContext>;
  /** Whether a credential is still valid from this address; connections whose credential stops being valid are closed. */
  stillValid: (credential: string, clientIp: string) => Promise<boolean>;
  /**
   * Told every distinct credential of a re-check just before `stillValid` is asked about each, so
   * an authenticator can read them all in one statement, which those calls then join.
   */
  lookUpTogether?: (credentials: Iterable<string>) => void;
  /** The client address of the upgrade request, under the server's proxy trust. */
  clientIpOf?: (request: IncomingMessage) => string;
  recheckMs?: number;
}

/** A parse or validation failure as the request error Apollo would send over HTTP (status 400). */
function requestError(error: unknown, code: string): GraphQLError {
  const message = error instanceof Error ? error.message : String(error);
  return new GraphQLError(message, {
    ...(error instanceof GraphQLError ? { nodes: error.nodes, source: error.source, positions: error.positions } : {}),
    extensions: { code, http: { status: 400 } },
  });
}

/** Close code for a connection whose key or token was revoked (4401, as graphql-ws uses for Unauthorized). */
const CLOSE_CREDENTIAL_REVOKED = 4401;

/**
 * graphql-ws on the same port and path as HTTP GraphQL. The credential comes from
 * `connectionParams` (`x-api-key`, `apiKey` or `authorization`) or else the upgrade request's headers.
 */
export function registerWebSocket(
  app: FastifyInstance,
  {
    schema,
    config,
    contextFor,
    stillValid,
    lookUpTogether,
    recheckMs = 1000,
    clientIpOf = (request) => request.socket.remoteAddress ?? 'unknown',
  }: WebSocketOptions,
): void {
  const rules = webSocketValidationRules(config);
  const authenticated = new Map<WebSocket, { credential: string; clientIp: string }>();
  // A revocation reaches live connections too: each credential is checked again every second,
  // once per (credential, address) however many sockets share it (a dashboard's ten tabs, a
  // partner's pool of listeners), then every socket holding it is closed if it is no longer valid.
  // The credentials are read together first (one statement for an instance's keys, not one each).
  let rechecking = false;
  const recheck = setInterval(() => {
    if (rechecking) return;
    const holders = new Map<string, { credential: string; clientIp: string; sockets: WebSocket[] }>();
    for (const [socket, { credential, clientIp }] of authenticated) {
      const key = `${clientIp}\u0000${credential}`;
      const group = holders.get(key);
      if (group) group.sockets.push(socket);
      else holders.set(key, { credential, clientIp, sockets: [socket] });
    }
    rechecking = true;
    if (lookUpTogether) {
      const credentials = new Set<string>();
      for (const { credential } of holders.values()) credentials.add(credential);
      lookUpTogether(credentials);
    }
    void Promise.all(
      [...holders.values()].map(({ credential, clientIp, sockets }) =>
        stillValid(credential, clientIp)
          .then((valid) => {
            if (valid) return;
            for (const socket of sockets) {
              authenticated.delete(socket);
              socket.close(CLOSE_CREDENTIAL_REVOKED, 'Unauthorized: the credential was revoked');
            }
          })
          .catch(() => undefined),
      ),
    ).finally(() => {
      rechecking = false;
    });
  }, recheckMs);
  recheck.unref();
  const contextOf = (ctx: {
    extra: WsExtra & { credential?: string; requestId?: string; clientIp?: string };
  }): Promise<GraphQLContext> =>
    contextFor({
      credential: ctx.extra.credential,
      requestId: ctx.extra.requestId ?? randomUUID(),
      clientIp: ctx.extra.clientIp ?? clientIpOf(ctx.extra.request),
      userAgent: userAgentOf(ctx.extra.request.headers),
      routerSecret: routerSecretFrom(ctx.extra.request.headers),
      origin: originFrom(ctx.extra.request.headers),
    });
  const wss = new WebSocketServer({ server: app.server, path: '/graphql' });
  // ws re-emits the HTTP server's errors: a port already taken was an unhandled 'error' event, a
  // crash with a stack trace, before `app.listen` could reject and main say so in one line. Once
  // listening, an error is logged.
  wss.on('error', (error) => {
    if (app.server.listening) app.log.error({ err: error }, 'GraphQL WebSocket server error');
  });
  const server = serveGraphQLWs<
    Record<string, unknown>,
    { credential?: string; requestId?: string; clientIp?: string }
  >(
    {
      schema,
      subscribe: createSharedSubscribe(),
      // Parsed, limited, validated and text-checked exactly as over HTTP, and held to the
      // credential's trusted documents and own limits; a bad document is an `error` message for
      // that operation, never a closed socket. The context is built here (graphql-ws then uses it
      // as it is) because the credential's settings decide which documents may run.
      onSubscribe: async (ctx, _id, payload) => {
        const contextValue = await contextOf(ctx);
        const access = contextValue.principal?.graphql;
        let query = payload.query;
        if (access?.trustedDocumentsOnly) {
          const admitted = trustedDocumentOf(
            await contextValue.services.graphqlAccess.documentsOf(access.owner),
            payload,
          );
          if (admitted instanceof GraphQLError) return [admitted];
          query = admitted;
        }
        let document: ReturnType<typeof parse>;
        try {
          document = parse(query, parseOptionsOf(config));
        } catch (error) {
          return [requestError(error, 'GRAPHQL_PARSE_FAILED')];
        }
        const invalid = validate(schema, document, [...specifiedRules, ...rules]);
        if (invalid.length > 0) return invalid.map((error) => requestError(error, 'GRAPHQL_VALIDATION_FAILED'));
        const problem = operationTextProblem(document, payload.variables);
        if (problem) return [asRequestError(problem)];
        const overLimit = access && credentialLimitRefusal(schema, document, access);
        if (overLimit) return [overLimit];
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue,
        };
      },
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
        ctx.extra.clientIp = clientIpOf(ctx.extra.request);
        if (credential) {
          // A credential that is invalid, or not allowed from this address, is refused at the door
          // (graphql-ws closes with 4403 Forbidden).
          if (!(await stillValid(credential, ctx.extra.clientIp))) return false;
          ctx.extra.credential = credential;
          authenticated.set(ctx.extra.socket, { credential, clientIp: ctx.extra.clientIp });
        }
        return true;
      },
      onOperation: subscriptionHooks.onOperation,
      onComplete: subscriptionHooks.onComplete,
      onClose: (ctx) => {
        authenticated.delete(ctx.extra.socket);
      },
      context: (ctx) => contextOf(ctx),
    },
    wss,
    {
      isProduction: config.NODE_ENV === 'production',
      formatError: createFormatError(
        config.GRAPHQL_STACK_TRACES,
        (error) => app.log.error({ err: error }, 'unhandled GraphQL error'),
        !config.GRAPHQL_INTROSPECTION,
      ),
    },
  );
  // Before the HTTP server closes (it waits for every connection, upgraded ones included).
  app.addHook('preClose', async () => {
    clearInterval(recheck);
    await server.dispose();
  });
  app.addHook('onClose', async () => {
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
