import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Headers that belong to one hop, not to the page: the outer reply sets its own. */
const HOP_HEADERS = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding']);

/**
 * Swagger UI at `prefix`, loaded on the first visit. Registering `@fastify/swagger-ui` at start
 * loads it with `@fastify/static`, `yaml` and `glob` (about 0.15 s of every start, docs/benchmarks.md
 * "Footprint and start") for a page few processes ever serve. The first request under `prefix`
 * builds a Fastify instance of its own with the UI registered on the OpenAPI document `spec()` resolves to
 * (the outer app's, complete by then); every request under `prefix` is answered by that instance
 * through `inject`, its status, headers and body passed on, while the page's security headers come
 * from the scope this is registered in (registerPages).
 */
export function registerDocsUi(scope: FastifyInstance, prefix: string, spec: () => Promise<unknown>): void {
  let ui: Promise<FastifyInstance> | undefined;
  const load = async () => {
    const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }, document] = await Promise.all([
      import('fastify'),
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
      spec(),
    ]);
    const app = Fastify({ logger: false });
    await app.register(swagger, { mode: 'static', specification: { document: document as never } });
    await app.register(swaggerUi, { routePrefix: prefix, uiConfig: { docExpansion: 'list' } });
    await app.ready();
    return app;
  };
  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    ui ??= load().catch((error: unknown) => {
      ui = undefined; // the next visit tries again
      throw error;
    });
    const headers = { ...request.headers };
    delete headers.host;
    delete headers.connection;
    const inner = await (await ui).inject({
      method: request.method as 'GET' | 'HEAD',
      url: request.url,
      headers,
    });
    reply.code(inner.statusCode);
    for (const [name, value] of Object.entries(inner.headers))
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    return reply.send(inner.rawPayload);
  };
  for (const url of [prefix, `${prefix}/*`])
    scope.route({ method: ['GET', 'HEAD'], url, schema: { hide: true }, handler: answer });
}
