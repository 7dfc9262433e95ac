import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RestV1Upstream } from '../domain/facade/rest-v1-upstream.js';
import { DomainError } from '../domain/errors.js';
import { UpstreamFaultError } from '../domain/facade/upstream-outcomes.js';
import { credentialHash } from '../domain/facade/upstream-user-directory.js';
import { credentialFrom, credentialSchemeFrom } from '../graphql/context.js';
import { endToEndHeaders } from './forwarded-headers.js';
import { SPEC_REST_PATHS } from './spec-paths.js';

/**
 * Facade mode's REST v1: each of the spec's paths goes to the upstream as it came (method, path and
 * query as sent, the body's bytes, every end-to-end header, the caller's X-API-KEY or
 * Authorization and Idempotency-Key among them), and the upstream's status, headers and body come
 * back as they are, the body streamed. Nothing is retried: a POST that timed out may have taken
 * effect upstream, so it is the caller's to retry with its Idempotency-Key. An upstream that cannot
 * be reached answers 502, one that does not answer in time 504, in the spec's general error body.
 * After a 429 with Retry-After, the partner's requests are answered 429 here until then, on every
 * instance, without reaching the upstream (rest-v1-upstream.ts).
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
      path: originFormTarget(request.raw.url ?? ''),
      headers: { ...endToEndHeaders(request.headers, 'request'), 'x-forwarded-for': request.ip },
      body: Buffer.isBuffer(request.body) ? request.body : undefined,
      partner: partnerOfRequest(request),
    });
  } catch (error) {
    // The kind only: the cause's message may name the upstream's address, and never holds the key.
    if (error instanceof UpstreamFaultError) request.log.warn({ upstreamFault: error.fault }, 'upstream fault');
    throw error;
  }
  return reply.code(answer.status).headers(endToEndHeaders(answer.headers, 'response')).send(answer.body);
}

/** The partner a pass-through request is from, for the upstream's Retry-After shared per partner; none without a credential. */
function partnerOfRequest(request: FastifyRequest): string | undefined {
  const value = credentialFrom(request.headers);
  return value === undefined ? undefined : credentialHash({ value, scheme: credentialSchemeFrom(request.headers) });
}

const badTarget = (message: string) => new DomainError('BAD_USER_INPUT', message, { field: 'path' });

/**
 * The request target as it may go upstream: a path (RFC 9112's origin-form), each of whose segments
 * stays a segment. An absolute-form target (`GET http://admin.internal/api/v1/user/me`) matches a
 * route here, and sent on as it came it would pick the virtual host the upstream's front proxy
 * routes to; a segment that decodes to `.` or `..`, or holds a slash or backslash (`..%2F..%2Finternal`)
 * would, on an upstream that decodes before routing, leave the spec's paths and UPSTREAM_URL's
 * prefix. Both are refused; any other target goes as sent, byte for byte.
 */
export function originFormTarget(target: string): string {
  if (!target.startsWith('/') || target.startsWith('//'))
    throw badTarget('The request target must be a path beginning with a single "/" (origin-form, RFC 9112 §3.2.1).');
  const query = target.indexOf('?');
  for (const segment of (query === -1 ? target : target.slice(0, query)).split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw badTarget('The path holds a malformed percent-encoding.');
    }
    if (decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\'))
      throw badTarget('A path segment may not be "." or "..", nor hold "/" or "\\", encoded or not.');
  }
  return target;
}
