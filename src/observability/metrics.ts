import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HttpMetrics } from './http-metrics.js';
import { logWriterStats } from './log-writer.js';
import { PlainCounter, PlainHistogram } from './plain-metrics.js';

/**
 * Every metric the gateway exports, on one registry per process. Labels are bounded: routes are
 * Fastify's route templates, GraphQL operation names are bounded per credential (see
 * operation-names.ts), job kinds and event kinds come from the code, statuses are classes. No user
 * id, reference or key is a label.
 * docs/metrics.md lists each metric with its meaning.
 */
export const registry = new Registry();
// The event-loop delay is sampled every 100 ms: each sample is a timer wake-up of an otherwise idle
// process (at 20 ms, 50 a second, they were about 1 ms of CPU a second); a stall of 100 ms or more
// is always seen, shorter ones when they cover a sample.
collectDefaultMetrics({ register: registry, prefix: 'gateway_', eventLoopMonitoringPrecision: 100 });

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LAG_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 1800, 7200, 21600, 86400];

const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
  new Counter<L>({ name, help, labelNames, registers: [registry] });
const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
  new Gauge<L>({ name, help, labelNames, registers: [registry] });
const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
  new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });

/** Requests by method, route template and status class: counted on every request, so kept cheap. */
export const httpMetrics = new HttpMetrics(registry, {
  requests: { name: 'gateway_http_requests_total', help: 'HTTP requests answered' },
  duration: {
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from request received to response sent',
    buckets: LATENCY_BUCKETS,
  },
  labelsOf: (method, route, status) => ({ method, route, status_class: statusClass(status) }),
});

export const metrics = {
  // Counted on every GraphQL request, so plain numbers (plain-metrics.ts); labels as graphql-plugin.ts sets them.
  graphqlOperations: new PlainCounter(registry, {
    name: 'gateway_graphql_operations_total',
    help: 'GraphQL operations over HTTP, by name and outcome',
  }),
  graphqlDuration: new PlainHistogram(registry, {
    name: 'gateway_graphql_operation_duration_seconds',
    help: 'GraphQL operation time, parse to response',
    buckets: LATENCY_BUCKETS,
  }),
  subscriptionsOpen: gauge('gateway_graphql_subscriptions_open', 'GraphQL subscriptions currently open over WebSocket'),
  subscriptionMessages: counter(
    'gateway_graphql_subscription_messages_total',
    'Results (next frames) sent to subscribers',
    [],
  ),
  jobsQueued: gauge('gateway_jobs_queued', 'Pending jobs not claimed by a worker (due or scheduled)', ['kind']),
  jobsDue: gauge('gateway_jobs_due', 'Pending jobs whose time has come, not claimed', ['kind']),
  jobsRunning: gauge('gateway_jobs_running', 'Jobs claimed by a worker with a live lease', ['kind']),
  jobsFailed: gauge('gateway_jobs_failed', 'Jobs that failed for good (dead), awaiting an operator', ['kind']),
  jobsOldestDueAge: gauge(
    'gateway_jobs_oldest_due_age_seconds',
    'How long the oldest due, unclaimed job has waited past its time',
    ['kind'],
  ),
  jobRuns: counter('gateway_job_runs_total', 'Job runs finished in this process, by outcome', ['kind', 'outcome']),
  jobDuration: histogram('gateway_job_run_duration_seconds', 'Job run time', ['kind'], LATENCY_BUCKETS),
  webhookAttempts: counter('gateway_webhook_attempts_total', 'Webhook delivery attempts, by outcome', ['outcome']),
  webhookDeliveryLag: histogram(
    'gateway_webhook_delivery_lag_seconds',
    'From the event to the 2xx that delivered it (retries included)',
    [],
    LAG_BUCKETS,
  ),
  webhookDeliveriesFailed: gauge(
    'gateway_webhook_deliveries_failed',
    'Webhook deliveries that ran out of retries (or met a disabled endpoint)',
  ),
  webhookDeliveriesPending: gauge('gateway_webhook_deliveries_pending', 'Webhook deliveries still being retried'),
  moneyOperations: counter(
    'gateway_money_operations_total',
    'Committed wallet transaction changes, by kind and status',
    ['kind', 'status'],
  ),
  moneyAmount: counter('gateway_money_amount_kobo_total', 'NGN amounts of those changes, in kobo', ['kind', 'status']),
  ledgerInvariant: gauge(
    'gateway_ledger_invariant_ok',
    '1 when every environment\u2019s ledger entries sum to zero at the last check, 0 when not',
    ['environment'],
  ),
  ledgerInvariantCheckedAt: gauge(
    'gateway_ledger_invariant_checked_timestamp_seconds',
    'When the ledger invariant was last checked (Unix time)',
  ),
  reconBreaksOpen: gauge(
    'gateway_reconciliation_breaks_open',
    'Open reconciliation breaks (items the gateway and a provider disagree on)',
    ['environment', 'provider', 'kind'],
  ),
  reconAgedBreaks: gauge(
    'gateway_reconciliation_aged_breaks',
    'Open reconciliation breaks detected longer ago than RECON_BREAK_MAX_AGE_HOURS',
  ),
  reconClearing: gauge(
    'gateway_reconciliation_clearing_balance_minor',
    'A provider\u2019s clearing (gateway minus provider, kobo) for the latest reconciled day',
    ['environment', 'provider'],
  ),
  reconClearingOverdue: gauge(
    'gateway_reconciliation_clearing_overdue',
    '1 when a provider\u2019s clearing is non-zero past its settlement window, else 0',
    ['environment', 'provider'],
  ),
  reconProviderUnread: gauge(
    'gateway_reconciliation_provider_unread',
    '1 when the latest reconciliation run could not read the provider (outage, credentials)',
    ['environment', 'provider'],
  ),
  dbPoolInUse: gauge('gateway_db_pool_connections_in_use', 'Database connections checked out of the pool', ['pool']),
  dbPoolIdle: gauge('gateway_db_pool_connections_idle', 'Idle database connections in the pool', ['pool']),
  dbPoolWaiting: gauge('gateway_db_pool_waiting', 'Queries waiting for a connection of the pool', ['pool']),
  dbPoolExhausted: counter(
    'gateway_db_pool_exhausted_total',
    'Checkouts that waited DATABASE_CONNECT_TIMEOUT_MS for a connection of the pool and gave up (answered 503 BUSY)',
    ['pool'],
  ),
  providerCallsInFlight: gauge(
    'gateway_provider_calls_in_flight',
    'Calls to the provider in flight in this process (places taken in its bulkhead)',
    ['provider'],
  ),
  providerCallsLimit: gauge(
    'gateway_provider_calls_limit',
    'Calls to the provider this process allows in flight at once (PROVIDER_CONCURRENCY, _SANDBOX)',
    ['provider'],
  ),
  providerCallsWaiting: gauge(
    'gateway_provider_calls_waiting',
    'Calls waiting for a place in the provider bulkhead (at most PROVIDER_QUEUE_WAIT_MS)',
    ['provider'],
  ),
  providerCallsRejected: counter(
    'gateway_provider_calls_rejected_total',
    'Calls refused 503 BUSY because the provider bulkhead stayed full',
    ['provider'],
  ),
  upstreamFaults: counter(
    'gateway_upstream_faults_total',
    'Facade mode: calls to the upstream REST v1 service that got no usable answer, by fault (timeout, unreachable, server_error, bad_answer)',
    ['fault'],
  ),
  upstreamRefusals: counter(
    'gateway_upstream_refusals_total',
    'Facade mode: upstream calls refused before they were sent, by reason (budget, partner_budget, retry_after, deadline)',
    ['reason'],
  ),
  facadeUnknownQueued: gauge(
    'gateway_facade_unknown_outcomes_queued',
    'Facade mode: mutations whose outcome the upstream never showed, waiting in the operator queue',
  ),
  facadeUnknownOldestAge: gauge(
    'gateway_facade_unknown_outcomes_oldest_seconds',
    'Facade mode: age (since it was sent) of the oldest mutation in the operator queue (0 when none wait)',
  ),
  redisUp: gauge(
    'gateway_redis_up',
    '1 when Redis is connected, 0 when configured and not connected (absent without Redis)',
  ),
  eventsUnstamped: gauge('gateway_events_unstamped', 'Committed events not yet given a seq'),
  eventsNotFannedOut: gauge(
    'gateway_events_not_fanned_out',
    'Stamped events whose webhook deliveries the relay has not written yet (behind its fan-out cursor)',
  ),
  eventsStampingLag: gauge(
    'gateway_events_stamping_lag_seconds',
    'Age of the oldest committed event not yet given a seq (0 when none wait)',
  ),
  eventsHorizonAge: gauge(
    'gateway_events_horizon_age_seconds',
    'PostgreSQL: age of the oldest open transaction of the cluster, which holds back vacuum (0 when none)',
  ),
  scrapeErrors: counter('gateway_metrics_collect_errors_total', 'Database gauges that could not be read at a scrape', [
    'collector',
  ]),
};

let droppedBytesCounted = 0;
/** Read from the log writer at each scrape: what standard output's reader never got. */
new Counter({
  name: 'gateway_log_bytes_dropped_total',
  help: 'Bytes of log lines dropped: the reader of standard output was gone, or more than 32 MiB behind',
  registers: [registry],
  collect() {
    const uncounted = logWriterStats.droppedBytes - droppedBytesCounted;
    if (uncounted > 0) this.inc(uncounted);
    droppedBytesCounted += uncounted;
  },
});

/** "2xx", "4xx", …: status codes as a bounded label. */
export const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;
