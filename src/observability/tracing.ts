import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { traceOutboundHttp } from './outbound-http.js';

/**
 * Traces are made by our own hooks (HTTP, GraphQL, SQL, provider calls, jobs, webhook sends)
 * through `@opentelemetry/api`. Until `installTracing` runs, every helper here returns at its
 * first line: with no exporter configured, tracing costs one boolean test per hook.
 */
let enabled = false;
/** The SDK's provider, once tracing-sdk.ts registered one (its module loads only then). */
let provider: { shutdown(): Promise<void> } | undefined;

export const tracer = () => trace.getTracer('partner-gateway');
export const tracingEnabled = () => enabled;
export const tracingInstalled = () => provider !== undefined;

/** Turns the hooks on, once tracing-sdk.ts has registered `registered` as the global provider. */
export function useTracingProvider(registered: { shutdown(): Promise<void> }): void {
  provider = registered;
  traceOutboundHttp();
  enabled = true;
}

/** Flushes and stops the exporter (at shutdown). */
export async function shutdownTracing(): Promise<void> {
  enabled = false;
  const current = provider;
  provider = undefined;
  await current?.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Runs `work` inside a span of its own (child of the active one); errors mark the span and pass through. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; parent?: Context } = {},
): Promise<T> {
  if (!enabled) return work(undefined);
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(
    name,
    { attributes, kind: options.kind ?? SpanKind.INTERNAL },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        markFailed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

export function markFailed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
}

type Carrier = Record<string, unknown>;

/** The context carried by W3C `traceparent`/`tracestate` headers (or the active one when there are none). */
export function contextFromHeaders(headers: Carrier): Context {
  return propagation.extract(context.active(), headers, {
    get: (carrier, key) => {
      const value = carrier[key];
      return Array.isArray(value) ? String(value[0]) : typeof value === 'string' ? value : undefined;
    },
    keys: (carrier) => Object.keys(carrier),
  });
}

/** `traceparent` (and `tracestate`) of the active span, to hand on to a job or another service. */
export function activeTraceHeaders(): Record<string, string> {
  if (!enabled) return {};
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}

/** The active trace id, for log lines; undefined without tracing or outside a span. */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getSpan(context.active());
  return span?.spanContext().traceId;
}

/**
 * Runs `work` in the root context, in no trace. For background work (relay rounds, job claims and
 * runs, polls, retries) that a request may wake or start but that outlives it: OpenTelemetry's
 * context follows AsyncLocalStorage into every timer, listener and promise made while a span is
 * active, so a loop woken by a request would otherwise add its statements to that request's trace
 * long after the request ended. Statements made here have no span (db-tracing.ts traces only under
 * one); work worth a trace of its own starts it (a job run, job-observation.ts).
 */
export function outsideTraces<T>(work: () => T): T {
  return enabled ? context.with(ROOT_CONTEXT, work) : work();
}

/** `callback`, run outside any trace whenever it is called: for timers and listeners of background work. */
export function detachedFromTraces<A extends unknown[], R>(callback: (...args: A) => R): (...args: A) => R {
  return (...args) => outsideTraces(() => callback(...args));
}

export { SpanKind, context as otelContext, trace as otelTrace };
