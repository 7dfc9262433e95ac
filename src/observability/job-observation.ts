import { context, type Link, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { metrics } from './metrics.js';
import { activeTraceHeaders, tracer, tracingEnabled } from './tracing.js';

/** Payload field that carries the enqueuing request's `traceparent` into its job. */
const TRACE_FIELD = 'traceContext';

/** The payload with the active trace's headers added (unchanged when tracing is off). */
export function withTraceContext(payload: Record<string, unknown>): Record<string, unknown> {
  const headers = activeTraceHeaders();
  return headers.traceparent ? { ...payload, [TRACE_FIELD]: headers } : payload;
}

/** The same, as SQL-ready JSON to merge (`jsonb || …`) into payloads built in SQL. */
export const traceContextJson = () => JSON.stringify(withTraceContext({}));

export interface JobRun {
  /** Runs the handler inside the job's span, the root of a trace of its own. */
  within<T>(work: () => Promise<T>): Promise<T>;
  finish(outcome: 'done' | 'retry' | 'failed' | 'lease-lost'): void;
}

/**
 * The span that enqueued the job, as a link. A job runs after its request has answered (often
 * long after: retries, polls), so it is never the request's child, which would stretch the
 * request's trace over every later attempt; the link still leads from one to the other.
 */
function enqueuedBy(payload: Record<string, unknown>): Link[] {
  const carrier = payload[TRACE_FIELD];
  if (!carrier || typeof carrier !== 'object') return [];
  const origin = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier));
  return origin ? [{ context: origin }] : [];
}

/** Times a job run, counts its outcome by kind, and traces it in a trace of its own. */
export function startJobRun(job: { kind: string; payload: Record<string, unknown> }): JobRun {
  const started = performance.now();
  const span = tracingEnabled()
    ? tracer().startSpan(
        `job ${job.kind}`,
        {
          kind: SpanKind.CONSUMER,
          root: true,
          attributes: { 'job.kind': job.kind },
          links: enqueuedBy(job.payload),
        },
        ROOT_CONTEXT,
      )
    : undefined;
  return {
    within: (work) => (span ? context.with(trace.setSpan(ROOT_CONTEXT, span), work) : work()),
    finish(outcome) {
      metrics.jobRuns.inc({ kind: job.kind, outcome });
      metrics.jobDuration.observe({ kind: job.kind }, (performance.now() - started) / 1000);
      if (span) {
        if (outcome !== 'done') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        span.end();
      }
    },
  };
}

/** One webhook attempt's outcome, and, on a 2xx, the time since its event. */
export function observeWebhookAttempt(statusCode: number | null, eventCreatedAt: Date, now: Date): void {
  const outcome =
    statusCode === null
      ? 'network_error'
      : statusCode >= 200 && statusCode < 300
        ? 'success'
        : statusCode === 410
          ? 'gone'
          : 'http_error';
  metrics.webhookAttempts.inc({ outcome });
  if (outcome === 'success')
    metrics.webhookDeliveryLag.observe(Math.max(0, (now.getTime() - eventCreatedAt.getTime()) / 1000));
}
