import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
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
  /** Runs the handler inside the job's span (a child of the request that enqueued it, when known). */
  within<T>(work: () => Promise<T>): Promise<T>;
  finish(outcome: 'done' | 'retry' | 'failed' | 'lease-lost'): void;
}

/** Times a job run, counts its outcome by kind, and traces it. */
export function startJobRun(job: { kind: string; payload: Record<string, unknown> }): JobRun {
  const started = performance.now();
  const span = tracingEnabled()
    ? tracer().startSpan(
        `job ${job.kind}`,
        { kind: SpanKind.CONSUMER, attributes: { 'job.kind': job.kind } },
        propagation.extract(context.active(), (job.payload[TRACE_FIELD] as Record<string, string>) ?? {}),
      )
    : undefined;
  return {
    within: (work) => (span ? context.with(trace.setSpan(context.active(), span), work) : work()),
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
