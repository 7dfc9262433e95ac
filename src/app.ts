import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { type Config, isFacade, isProduction, publicUrlOf } from './config.js';
import { registerApollo } from './graphql/apollo.js';
import {
  admittedFrom,
  type Authenticator,
  authenticateCredential,
  buildContext,
  credentialFrom,
  credentialSchemeFrom,
  type GraphQLContext,
  idempotencyKeyFrom,
  originFrom,
  routerSecretFrom,
} from './graphql/context.js';
import { buildSchema } from './graphql/schema.js';
import { facadeSurface } from './graphql/facade-fields.js';
import { registerWebSocket } from './graphql/websocket.js';
import { noteCredentialOrigins, registerCors } from './http/cors.js';
import { installErrorHandlers } from './http/error-handler.js';
import { registerProviderWebhooks } from './http/provider-webhooks.js';
import { registerHealthRoutes } from './http/health.js';
import { requestIdOf } from './http/request-id.js';
import { userAgentOf } from './domain/audit/request-context.js';
import { clientIpResolver, trustProxyOf } from './http/client-ip.js';
import { assertCleanRequest } from './http/text-hygiene.js';
import { compileRoutes, registerRestRoutes } from './rest/engine.js';
import { registerOpenApi } from './rest/openapi.js';
import { restV1Routes } from './rest/v1/index.js';
import { validatorCompiler } from './rest/validation.js';
import type { Services } from './services.js';
import { registerAuthorizeEndpoints, registerTokenEndpoints } from './connect/connect-routes.js';
import { registerDashboard } from './dashboard/index.js';
import { registerWebPages } from './web/pages-plugin.js';
import { registerRequestObservation } from './observability/http-hooks.js';
import { safeSerializers } from './observability/log-safety.js';
import { batchedStdout } from './observability/log-writer.js';
import { lazyRequestLoggers } from './observability/log-request-logger.js';
import { registerMetrics } from './observability/metrics-endpoint.js';
import { registerOperatorPages } from './operations/reconciliation-page.js';
import { registerFacadeOperatorPages } from './operations/facade-unknowns-page.js';
import { linkContext } from './observability/request-observation.js';
import { UpstreamUserDirectory } from './domain/facade/upstream-user-directory.js';
import { upstreamPrincipals } from './domain/facade/upstream-principals.js';
import { registerPassthrough } from './facade/passthrough.js';
import { registerInboundWebhooks } from './facade/inbound-route.js';
import { registerFacadeWebhookPage } from './dashboard/facade-webhook-page.js';
import { facadeInboundRoutes } from './rest/facade-inbound-routes.js';
import { withLocalOwner } from './domain/facade/inbound-owners.js';
import { notInFacade } from './domain/facade/not-in-facade.js';
import { isSpecRoute } from './facade/spec-paths.js';

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
    /** True once the listener no longer accepts connections (shutdown): responses close their connections. */
    listenerClosed: boolean;
  }
}

const NO_ORIGINS: Promise<ReadonlySet<string>> = Promise.resolve(new Set());

/** Header values that must never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-router-secret"]',
  'res.headers["set-cookie"]',
];

/** Builds the whole HTTP surface as one Fastify instance: GraphQL, WebSocket, REST v1, docs, health. */
export async function buildApp({ services, logger = false }: AppOptions): Promise<FastifyInstance> {
  const config: Config = services.config;
  const facade = isFacade(config);
  const app = Fastify({
    logger:
      logger === false
        ? false
        : {
            level: config.LOG_LEVEL,
            redact: REDACTED_PATHS,
            serializers: safeSerializers,
            ...(logger === true ? { stream: batchedStdout() } : logger),
          },
    // One line per request, written by registerRequestObservation (Fastify's own carry the URL).
    logController: new LogController({ disableRequestLogging: true }),
    // request.log becomes a pino child only when something logs through it (log-request-logger.ts).
    ...(logger === false ? {} : { childLoggerFactory: lazyRequestLoggers }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdOf,
    // request.ip (allow-lists, per-IP limits, audit) believes X-Forwarded-For only from trusted proxies.
    trustProxy: trustProxyOf(config.TRUST_PROXY),
    // Requests that reach a connection accepted before the listener closed are served, not refused.
    return503OnClosing: false,
    // Fastify answers 414 for a path parameter over 100 characters; a recipient's transfer
    // reference reaches 104 (`<reference>:in:<sender id>`). Each route's schema bounds its own.
    routerOptions: { maxParamLength: 128 },
  });
  app.decorate('services', services);
  app.decorate('draining', false);
  app.decorate('listenerClosed', false);
  app.setValidatorCompiler(validatorCompiler);
  acceptEmptyJsonBodies(app);
  // Hooks below take `done` rather than being async: an async hook costs a promise per request.
  app.addHook('onSend', (request, reply, payload, done) => {
    // A facade passes the upstream's own request id back as it is.
    if (!facade || !reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
    // Once the listener is closed, keep-alive connections are closed after their response, so
    // clients open new ones (to other instances). Not before: a client told to reconnect while the
    // listener is still open may land in its accept queue just as it closes, and be reset.
    if (app.listenerClosed) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onClose', async () => {
    services.health.close();
    services.eventFeed.stop();
    services.testClocks.stop();
    await Promise.all([services.rateLimiter.close(), services.doorbell.close(), services.upstream?.close()]);
  });
  installErrorHandlers(app);
  registerRequestObservation(app, services.requestLog);
  // Before any route's own checks, lookups or logging: NUL and unpaired surrogates are refused.
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      assertCleanRequest(request);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
  // A facade's Connect apps are the upstream's: only CORS_ORIGINS applies (and nothing without it).
  if (!facade) await registerCors(app, config.CORS_ORIGINS, () => services.graphqlAccess.appOrigins());
  else if (config.CORS_ORIGINS?.trim()) await registerCors(app, config.CORS_ORIGINS, () => NO_ORIGINS);

  // A facade's keys and tokens are the upstream's: whoever its GET /api/v1/user/me says they act for.
  const upstreamCredentials =
    facade && services.userDirectory instanceof UpstreamUserDirectory ? services.userDirectory : undefined;
  const authenticators: Authenticator[] = upstreamCredentials
    ? [withLocalOwner(upstreamPrincipals(upstreamCredentials, config.UPSTREAM_ENVIRONMENT), services.localOwners)]
    : [
        (credential) => services.apiKeys.authenticate(credential),
        (credential) => services.authorizationServer.authenticateAccessToken(credential),
      ];
  /** A request's context before it is tied to the request's observation (linkContext). */
  const unlinkedContextFor = (request: FastifyRequest) =>
    buildContext(services, authenticators, {
      credential: credentialFrom(request.headers),
      credentialScheme: facade ? credentialSchemeFrom(request.headers) : undefined,
      requestId: request.id,
      clientIp: request.ip,
      userAgent: userAgentOf(request.headers),
      routerSecret: routerSecretFrom(request.headers),
      idempotencyKey: idempotencyKeyFrom(request.headers),
      origin: originFrom(request.headers),
    });
  // A `then`, not an async function: two promises fewer per request.
  const linked = (context: GraphQLContext, request: FastifyRequest) => {
    noteCredentialOrigins(request, context.principal);
    return linkContext(context, request);
  };
  const contextFor = (request: FastifyRequest) =>
    unlinkedContextFor(request).then((context) => linked(context, request));

  const schema = buildSchema({
    federationRouterOnly: isProduction(config),
    facade: facade ? facadeSurface(config.UPSTREAM_ROUTES) : undefined,
  });
  // A facade passes the spec's own paths through to the upstream; its other routes run the graph.
  const ownRoutes = facade
    ? [...restV1Routes.filter((route) => !isSpecRoute(route.method, route.path)), ...facadeInboundRoutes]
    : restV1Routes;
  // A route whose operation reads a field the facade's graph leaves out answers NOT_IN_FACADE (501).
  const routes = compileRoutes(schema, ownRoutes, {
    validate: 'firstCall',
    ...(facade ? { unservable: (route: string) => notInFacade(route) } : {}),
  });

  registerHealthRoutes(app, services.health, () => app.draining);
  registerMetrics(app, services);
  // A facade's accounts, OAuth grants, provider records and reconciliation are the upstream's: the
  // pages and endpoints that would serve them from the facade's own database are not registered.
  if (!facade) {
    registerOperatorPages(app, services);
    registerProviderWebhooks(app, services);
  } else {
    // What is a facade's own: its operator queue of mutations whose outcome is unknown.
    registerFacadeOperatorPages(app, services);
  }
  await registerApollo(app, { schema, config, contextFor });
  registerWebSocket(app, {
    schema,
    config,
    contextFor: (facts) => buildContext(services, authenticators, facts),
    stillValid: async (credential, clientIp) => {
      // A facade whose upstream is out for a moment has not seen the credential revoked.
      const principal = await authenticateCredential(authenticators, credential).catch((error: unknown) => {
        if (facade) return 'unsettled' as const;
        throw error;
      });
      if (principal === 'unsettled') return true;
      return principal !== undefined && admittedFrom(principal, clientIp);
    },
    // A facade's credentials are the upstream's, asked one at a time.
    ...(upstreamCredentials
      ? {}
      : { lookUpTogether: (credentials: Iterable<string>) => services.apiKeys.lookUpTogether(credentials) }),
    clientIpOf: clientIpResolver(trustProxyOf(config.TRUST_PROXY)),
  });
  await registerOpenApi(app, { routes: restV1Routes, serverUrl: publicUrlOf(config) });
  if (facade && services.inboundWebhooks) registerInboundWebhooks(app, services.inboundWebhooks);
  if (facade && services.upstream) {
    await registerPassthrough(app, services.upstream);
    // The one page a facade serves: a partner's set-up of its upstream events, proved with an upstream key.
    await registerWebPages(app, services, (pages) => registerFacadeWebhookPage(pages, services));
  } else {
    await registerWebPages(app, services, async (pages) => {
      await registerDashboard(pages);
      registerAuthorizeEndpoints(pages);
    });
    await registerTokenEndpoints(app);
  }
  // REST links the context in its own step after the context is built: one promise fewer per request.
  registerRestRoutes(app, {
    routes,
    contextFor: unlinkedContextFor,
    linkContext: linked,
    bodyLimit: config.REST_BODY_LIMIT_BYTES,
  });
  return app;
}

/**
 * Many HTTP clients send `Content-Type: application/json` on every request, bodiless POSTs
 * included (re-send, test event). An empty body is read as no body; anything else goes through
 * Fastify's own JSON parser (with its prototype-poisoning protection).
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === '') return done(null, undefined);
    // Fastify's default parser answers through `done`; nothing awaits its return value.
    void parseJson(request, text, done);
  });
}
