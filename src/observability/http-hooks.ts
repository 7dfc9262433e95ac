import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUntouchedLazy } from './log-request-logger.js';
import { httpMetrics } from './metrics.js';
import { type RequestLineFields, type RequestLineWriter, requestLineWriter } from './request-line.js';
import { observationOf } from './request-observation.js';
import { loggablePath, type KeyRequestLog } from '../http/key-request-log.js';
import { contextFromHeaders, tracer, tracingEnabled } from './tracing.js';

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * One hook set per app: a server span per request (child of an incoming W3C `traceparent`), the
 * HTTP metrics, and one JSON log line per request with request id, trace id, credential id, route
 * or GraphQL operation, status and duration. (Fastify's own request lines are off: they carry the
 * URL, whose query string can hold a GraphQL document's variables.)
 */
export function registerRequestObservation(app: FastifyInstance, requestLog?: KeyRequestLog): void {
  // Without tracing nothing needs the request before its answer: the trace id of an incoming
  // `traceparent` is read when the line is written, and no hook runs per request at its start.
  if (tracingEnabled())
    app.addHook('onRequest', (request, _reply, done) => {
      const observation = observationOf(request);
      const parent = contextFromHeaders(request.headers);
      const span = tracer().startSpan(
        `${request.method} ${routeOf(request)}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': request.method, 'http.route': routeOf(request) },
        },
        parent,
      );
      observation.span = span;
      observation.traceId = span.spanContext().traceId;
      observation.context = trace.setSpan(parent, span);
      context.with(observation.context, done);
    });
  // The body arrives on the socket's own async context; the handler runs in the request's again.
  // Only spans need it: tracing is installed before the app is built (main.ts), or never.
  if (tracingEnabled())
    app.addHook('preHandler', (request, _reply, done) => {
      const active = observationOf(request).context;
      if (active) context.with(active, done);
      else done();
    });
  const writeLine = requestLineWriter(app.log);
  app.addHook('onResponse', (request, reply, done) => {
    observe(app.log, writeLine, request, reply);
    if (requestLog) keepInRequestLog(requestLog, request, reply);
    done();
  });
}

function observe(
  root: FastifyBaseLogger,
  writeLine: RequestLineWriter | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const observation = observationOf(request);
  const route = routeOf(request);
  const status = reply.statusCode;
  const seconds = reply.elapsedTime / 1000;
  httpMetrics.seriesFor(request.method, route, status).observe(seconds);
  if (observation.span) {
    observation.span.setAttribute('http.response.status_code', status);
    if (status >= 500) observation.span.setStatus({ code: SpanStatusCode.ERROR });
    observation.span.end();
  }
  const lazy = isUntouchedLazy(request.log);
  const fields: RequestLineFields = {
    reqId: request.id,
    traceId: observation.span ? observation.traceId : incomingTraceId(request),
    credentialId: observation.credentialId,
    method: request.method,
    route,
    operation: observation.operation,
    statusCode: status,
    durationMs: Math.round(reply.elapsedTime * 10) / 10,
  };
  if (lazy) {
    if (!writeLine?.(fields)) root.info(fields, 'request completed');
  }
  // A request that logged through its own logger has a pino child carrying its id: pino writes it.
  else request.log.info({ ...fields, reqId: undefined }, 'request completed');
}

/**
 * An API key's request, into this instance's request log (memory only, no database write): method,
 * path without its query string, status, duration and request id; never a body or a header.
 */
function keepInRequestLog(requestLog: KeyRequestLog, request: FastifyRequest, reply: FastifyReply): void {
  const observation = observationOf(request);
  if (observation.credentialKind !== 'api_key' || !observation.credentialId) return;
  requestLog.record(observation.credentialId, {
    at: Date.now(),
    method: request.method,
    path: loggablePath(request.url),
    statusCode: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 10) / 10,
    requestId: request.id,
  });
}

/** The trace id of the request's W3C `traceparent` header, when it has a well-formed one. */
function incomingTraceId(request: FastifyRequest): string | undefined {
  const header = request.headers.traceparent;
  return typeof header === 'string' ? TRACEPARENT.exec(header)?.[1] : undefined;
}

/** The route template ("/api/v1/bills/:reference"), never the URL with its values. */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}
