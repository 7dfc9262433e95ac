import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Config } from './config.js';
import { registerApollo } from './graphql/apollo.js';
import { type Authenticator, buildContext, credentialFrom } from './graphql/context.js';
import { buildSchema } from './graphql/schema.js';
import { registerWebSocket } from './graphql/websocket.js';
import { installErrorHandlers } from './http/error-handler.js';
import { registerHealthRoutes } from './http/health.js';
import { requestIdOf } from './http/request-id.js';
import { compileRoutes, registerRestRoutes } from './rest/engine.js';
import { registerOpenApi } from './rest/openapi.js';
import { restV1Routes } from './rest/v1/index.js';
import { validatorCompiler } from './rest/validation.js';
import type { Services } from './services.js';

export interface AppOptions {
  services: Services;
  /** Pino options, or false for silence (tests). */
  logger?: boolean | Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** True once shutdown has begun: readiness fails so load balancers stop sending traffic. */
    draining: boolean;
  }
}

/** Header values that must never reach a log line. */
export const REDACTED_PATHS = ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

/** Builds the whole HTTP surface as one Fastify instance: GraphQL, WebSocket, REST v1, docs, health. */
export async function buildApp({ services, logger = false }: AppOptions): Promise<FastifyInstance> {
  const config: Config = services.config;
  const app = Fastify({
    logger: logger === false ? false : { level: config.LOG_LEVEL, redact: REDACTED_PATHS, ...(logger === true ? {} : logger) },
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdOf,
    return503OnClosing: true,
  });
  app.decorate('services', services);
  app.decorate('draining', false);
  app.setValidatorCompiler(validatorCompiler);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandlers(app);

  const authenticators: Authenticator[] = [(credential) => services.apiKeys.authenticate(credential)];
  const contextFor = (request: FastifyRequest) =>
    buildContext(services, authenticators, credentialFrom(request.headers), request.id);

  const schema = buildSchema();
  const routes = compileRoutes(schema, restV1Routes);

  registerHealthRoutes(app, services.db, () => app.draining);
  await registerApollo(app, { schema, contextFor, development: config.NODE_ENV === 'development' });
  registerWebSocket(app, {
    schema,
    contextFor: (credential, requestId) => buildContext(services, authenticators, credential, requestId),
  });
  await registerOpenApi(app);
  registerRestRoutes(app, { schema, routes, contextFor });
  return app;
}

