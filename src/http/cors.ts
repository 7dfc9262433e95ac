import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../domain/auth/principal.js';

/** What the request's credential allows a browser to read it from, noted once its context is built. */
const CREDENTIAL_ORIGINS = Symbol('credential origins');
type Noted = FastifyRequest & { [CREDENTIAL_ORIGINS]?: readonly string[] };

/**
 * Notes the request's principal for CORS: a Connect app's token carries its app's registered
 * origins. Called where the request's context is built (HTTP GraphQL and REST).
 */
export function noteCredentialOrigins(request: FastifyRequest, principal: Principal | null): void {
  const origins = principal?.app?.allowedOrigins;
  if (origins?.length) (request as Noted)[CREDENTIAL_ORIGINS] = origins;
}

/**
 * CORS for partner frontends. Two lists: CORS_ORIGINS, the gateway's (API keys, anonymous calls,
 * apps that registered none), and each Connect app's own origins.
 *
 * A preflight carries no credential, so it cannot tell whose request follows: it is answered for an
 * origin on CORS_ORIGINS or registered by any live app. The request itself is then held to its
 * credential: a response keeps `Access-Control-Allow-Origin` for an origin outside CORS_ORIGINS only
 * when the request's token belongs to an app that registered that origin (otherwise the browser
 * reads nothing), and an app's token sent from an origin the app did not register is refused before
 * anything runs (context.ts, ORIGIN_NOT_ALLOWED).
 */
export async function registerCors(
  app: FastifyInstance,
  corsOrigins: string | undefined,
  appOrigins: () => Promise<ReadonlySet<string>>,
): Promise<void> {
  const origins = new Set(
    corsOrigins
      ?.split(',')
      .map((o) => o.trim())
      .filter(Boolean) ?? [],
  );
  const anyOrigin = origins.has('*');
  await app.register(cors, {
    origin: (origin, callback) => {
      // A server's call (no Origin) and the gateway's own origins need no lookup.
      if (origin === undefined) return callback(null, false);
      if (anyOrigin || origins.has(origin)) return callback(null, true);
      appOrigins().then(
        (registered) => callback(null, registered.has(origin)),
        (error: Error) => callback(error, false),
      );
    },
    allowedHeaders: [
      'content-type',
      'x-api-key',
      'authorization',
      'idempotency-key',
      'x-request-id',
      'apollo-require-preflight',
    ],
    exposedHeaders: ['x-request-id', 'retry-after'],
    maxAge: 600,
  });
  if (anyOrigin) return;
  app.addHook('onSend', (request, reply, payload, done) => {
    const origin = request.headers.origin;
    if (origin === undefined || request.method === 'OPTIONS' || origins.has(origin)) return done(null, payload);
    if (!(request as Noted)[CREDENTIAL_ORIGINS]?.includes(origin)) reply.removeHeader('access-control-allow-origin');
    done(null, payload);
  });
}
