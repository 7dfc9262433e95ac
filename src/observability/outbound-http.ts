import diagnostics from 'node:diagnostics_channel';
import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracer, tracingEnabled } from './tracing.js';

/**
 * Provider calls (global fetch) and webhook sends (undici.request) both go through undici, which
 * announces each request on diagnostics channels. Here each one gets a client span, and its
 * `traceparent` header names that span, so the provider's or partner's own traces join ours.
 * The span names the method and host only: paths and query strings can hold references.
 */
interface UndiciRequest {
  method: string;
  origin: string | URL;
  addHeader(name: string, value: string): unknown;
}

const spans = new WeakMap<object, Span>();
let subscribed = false;

export function traceOutboundHttp(): void {
  if (subscribed) return;
  subscribed = true;
  diagnostics.subscribe('undici:request:create', (message) => {
    if (!tracingEnabled()) return;
    const { request } = message as { request: UndiciRequest };
    const parent = context.active();
    if (!trace.getSpan(parent)) return;
    const host = hostOf(request.origin);
    const span = tracer().startSpan(
      `${request.method} ${host}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': request.method, 'server.address': host },
      },
      parent,
    );
    spans.set(request, span);
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(parent, span), headers);
    for (const [name, value] of Object.entries(headers)) request.addHeader(name, value);
  });
  diagnostics.subscribe('undici:request:headers', (message) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  diagnostics.subscribe('undici:request:error', (message) => {
    const { request, error } = message as { request: object; error: unknown };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    span.end();
  });
}

function hostOf(origin: string | URL): string {
  try {
    return new URL(String(origin)).host;
  } catch {
    return 'unknown';
  }
}
