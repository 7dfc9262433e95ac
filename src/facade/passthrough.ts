import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RestV1Upstream } from '../domain/facade/rest-v1-upstream.js';
import { UpstreamFaultError } from '../domain/facade/upstream-outcomes.js';
import { endToEndHeaders } from './forwarded-headers.js';
import { SPEC_REST_PATHS } from './spec-paths.js';

/**
 * Facade mode's REST v1: each of the spec's paths goes to the upstream as it came (method, path and
 * query as sent, the body's bytes, every end-to-end header, the caller's X-API-KEY or
 * Authorization and Idempotency-Key among them), and the upstream's status, headers and body come
 * back as they are, the body streamed. Nothing is retried: a POST that timed out may have taken
 * effect upstream, so it is the caller's to retry with its Idempotency-Key. An upstream that cannot
 * be reached answers 502, one that does not answer in time 504, in the spec's general error body.
 */
export async function registerPassthrough(app: FastifyInstance, upstream: RestV1Upstream): Promise<void> {
  await app.register(async (scope) => {
    // The body's bytes, whatever their type: the upstream parses them, not this gateway.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const handler = (request: FastifyRequest, reply: FastifyReply) => forward(upstream, request, reply);
    for (const { method, path } of SPEC_REST_PATHS) scope.route({ method, url: path, handler });
  });
}

async function forward(upstream: RestV1Upstream, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  let answer: Awaited<ReturnType<RestV1Upstream['send']>>;
  try {
    answer = await upstream.send({
      method: request.method,
      path: request.raw.url ?? request.url,
      headers: endToEndHeaders(request.headers, 'request'),
      body: Buffer.isBuffer(request.body) ? request.body : undefined,
    });
  } catch (error) {
    // The kind only: the cause's message may name the upstream's address, and never holds the key.
    if (error instanceof UpstreamFaultError) request.log.warn({ upstreamFault: error.fault }, 'upstream fault');
    throw error;
  }
  return reply.code(answer.status).headers(endToEndHeaders(answer.headers, 'response')).send(answer.body);
}
