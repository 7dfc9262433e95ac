import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import type { PrometheusFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/client.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { enqueueJob, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { stampAll } from '../helpers/events.js';
import { onPostgres } from '../helpers/database.js';
import { Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';
import { heldJob } from '../helpers/jobs.js';
import { type Labels, MetricsText } from '../helpers/metrics-text.js';

/**
 * Reads /metrics over HTTP, as Prometheus would, parsed by MetricsText (histogram `_count` series
 * with their labels come from the sample lines, which the text-format parser folds together). Values
 * are read for exactly the labels given, not for labels that include them as MetricsText.series does.
 */
class Scrape {
  private constructor(private readonly metrics: MetricsText) {}

  static async of(s: StartedTestApp): Promise<Scrape> {
    const response = await fetch(`${s.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return new Scrape(MetricsText.parse(await response.text()));
  }

  get families(): PrometheusFamily[] {
    return this.metrics.families;
  }

  family(name: string): PrometheusFamily {
    const found = this.families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric family ${name}`);
    return found;
  }

  /** A counter's or gauge's value for exactly these labels (0 when the series does not exist). */
  value(name: string, labels: Labels = {}): number {
    this.family(name);
    return this.metrics.samples.find((m) => m.name === name && sameLabels(m.labels, labels))?.value ?? 0;
  }

  /** A histogram's observation count for exactly these labels. */
  count(name: string, labels: Labels = {}): number {
    expect(this.family(name).type).toBe('HISTOGRAM');
    return this.metrics.samples.find((m) => m.name === `${name}_count` && sameLabels(m.labels, labels))?.value ?? 0;
  }
}

const sameLabels = (a: Labels, b: Labels) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

describe('/metrics after a scripted run', () => {
  let s: StartedTestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    // A database of its own on PostgreSQL: files run side by side there, and their events would be stamped here too.
    s = await startTestApp({
      listen: true,
      isolated: true,
      config: {
        RATE_LIMIT_PER_MINUTE: 100_000,
        ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      },
    });
    receiver = await new Receiver().start();
    receiver.answer = () => 500;
  });
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    await receiver.stop();
    await s.t.close();
  });

  it('counts a transfer, a bill, a failed webhook, a subscription, jobs, and reads the database gauges', async () => {
    const { t } = s;
    const alice = await seedTenant(t.services);
    const bob = await seedTenant(t.services);
    // Every event committed so far is stamped first, so the money counters below move by this run only.
    await stampAll(t.services.db);
    const before = await Scrape.of(s);

    // A subscriber of alice's transaction updates.
    const client = createClient({
      url: s.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': alice.keys.READ_ONLY },
      retryAttempts: 0,
    });
    cleanups.push(async () => {
      await client.dispose();
    });
    const updates: unknown[] = [];
    const unsubscribe = client.subscribe(
      { query: 'subscription { transactionUpdates { eventId type } }' },
      { next: (m) => updates.push(m), error: () => undefined, complete: () => undefined },
    );
    await waitUntil(async () => (await Scrape.of(s)).value('gateway_graphql_subscriptions_open') === 1, 5_000);

    // A webhook endpoint whose receiver answers 500.
    const hook = await rest(t, alice.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/webhooks', {
      url: receiver.url,
      eventTypes: ['transaction.completed'],
    });
    expect(hook.statusCode).toBe(201);

    await fund(t, alice, 1000);
    const transfer = await rest(t, alice.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', {
      amount: 100.5,
      recipient: bob.user.id,
    });
    expect(transfer.statusCode).toBe(201);
    const bill = await rest(t, alice.keys.TRANSACTIONS)('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'mtn',
      amount: 200,
    });
    expect(bill.statusCode).toBe(201);
    const named = await graphql(t.app, alice.keys.READ_ONLY, 'query MetricsProbe { apiInfo { version } }');
    expect(named.status).toBe(200);
    await graphql(t.app, alice.keys.READ_ONLY, 'query MetricsProbe { noSuchField }');

    await waitUntil(async () => {
      await stampCommittedEvents(t.services.db, { wait: true });
      t.services.eventFeed.wake();
      const [waiting] = await queryRows<{ n: unknown }>(
        t.services.db,
        sql`select count(*) as n from events where seq is null`,
      );
      return updates.length >= 3 && Number(waiting?.n) === 0;
    }, 20_000);

    // The webhook attempt: the handler run once on alice's first delivery (other files' jobs stay untouched).
    const endpointId = hook.json().data.endpoint.id;
    const deliveries = (
      await rest(t, alice.keys.FULL_ACCESS)('GET', `/api/v1/webhooks/${endpointId}/deliveries`)
    ).json().data;
    expect(deliveries.length).toBeGreaterThan(0);
    const handler = new WebhookDeliveryHandler(t.services.db, t.services.clock, t.services.secrets);
    await handler.run(
      await heldJob(t.services.db, { payload: { deliveryId: deliveries[0].id }, tenant: alice.user.id }),
    );
    expect(receiver.received).toHaveLength(1);

    // Jobs of kinds of this run's own: one fails for good, one waits (due an hour ago), one is for later.
    const failing = `metrics-test-fail-${randomUUID().slice(0, 8)}`;
    const waiting = `metrics-test-wait-${randomUUID().slice(0, 8)}`;
    const now = t.services.clock.now();
    await enqueueJob(t.services.db, { kind: failing, runAt: now, tenant: '' });
    await enqueueJob(t.services.db, { kind: waiting, runAt: new Date(now.getTime() - 3_600_000), tenant: '' });
    await enqueueJob(t.services.db, { kind: waiting, runAt: new Date(now.getTime() + 3_600_000), tenant: '' });
    const runner = new JobRunner(t.services.db, t.services.clock, [
      { kind: failing, run: async () => ({ status: 'failed', error: 'refused on purpose' }) },
    ]);
    expect(await runner.runDueJobs()).toBe(1);

    await t.app.metricsText(true);
    const after = await Scrape.of(s);
    const delta = (name: string, labels: Labels = {}) => after.value(name, labels) - before.value(name, labels);
    const deltaCount = (name: string, labels: Labels) => after.count(name, labels) - before.count(name, labels);

    // HTTP: by route template, method and status class, with a latency histogram.
    const transferLabels = { method: 'POST', route: '/api/v1/wallet/transfer', status_class: '2xx' };
    expect(delta('gateway_http_requests_total', transferLabels)).toBe(1);
    expect(deltaCount('gateway_http_request_duration_seconds', transferLabels)).toBe(1);
    expect(after.family('gateway_http_request_duration_seconds').type).toBe('HISTOGRAM');
    expect(
      delta('gateway_http_requests_total', { method: 'POST', route: '/api/v1/bills/buy-airtime', status_class: '2xx' }),
    ).toBe(1);

    // GraphQL: by operation name and outcome.
    expect(delta('gateway_graphql_operations_total', { operation: 'MetricsProbe', type: 'query', outcome: 'ok' })).toBe(
      1,
    );
    expect(
      delta('gateway_graphql_operations_total', { operation: 'MetricsProbe', type: 'query', outcome: 'invalid' }),
    ).toBe(1);

    // Subscriptions: one open, and the results it was sent.
    expect(after.value('gateway_graphql_subscriptions_open')).toBe(1);
    expect(delta('gateway_graphql_subscription_messages_total')).toBe(updates.length);

    // Money: deposit 1000, transfer 100.50 out (and in), a 200 bill, each counted once, amounts in kobo.
    const completed = (kind: string) => ({ kind, status: 'COMPLETED' });
    expect(delta('gateway_money_operations_total', completed('DEPOSIT'))).toBe(1);
    expect(delta('gateway_money_amount_kobo_total', completed('DEPOSIT'))).toBe(100_000);
    expect(delta('gateway_money_operations_total', completed('TRANSFER_OUT'))).toBe(1);
    expect(delta('gateway_money_amount_kobo_total', completed('TRANSFER_OUT'))).toBe(10_050);
    expect(delta('gateway_money_operations_total', completed('TRANSFER_IN'))).toBe(1);
    expect(delta('gateway_money_amount_kobo_total', completed('BILL'))).toBe(20_000);

    // Webhooks: the attempt failed with an HTTP status; nothing was delivered, so no lag was observed.
    expect(delta('gateway_webhook_attempts_total', { outcome: 'http_error' })).toBe(1);
    expect(deltaCount('gateway_webhook_delivery_lag_seconds', {})).toBe(0);
    expect(after.value('gateway_webhook_deliveries_pending')).toBeGreaterThanOrEqual(1);

    // Jobs: by kind, from the runner and from the table.
    expect(delta('gateway_job_runs_total', { kind: failing, outcome: 'failed' })).toBe(1);
    expect(after.value('gateway_jobs_failed', { kind: failing })).toBe(1);
    expect(after.value('gateway_jobs_queued', { kind: waiting })).toBe(2);
    expect(after.value('gateway_jobs_due', { kind: waiting })).toBe(1);
    expect(after.value('gateway_jobs_running', { kind: waiting })).toBe(0);
    expect(after.value('gateway_jobs_oldest_due_age_seconds', { kind: waiting })).toBeGreaterThanOrEqual(3599);

    // The ledger sums to zero; everything committed is stamped.
    expect(after.value('gateway_ledger_invariant_ok', { environment: 'sandbox' })).toBe(1);
    expect(after.value('gateway_events_unstamped')).toBe(0);
    expect(after.value('gateway_events_stamping_lag_seconds')).toBe(0);

    // Pool and Redis where they exist; event-loop lag and process metrics always.
    if (onPostgres) {
      expect(after.families.map((f) => f.name)).toContain('gateway_db_pool_connections_in_use');
      expect(after.value('gateway_db_pool_waiting', { pool: 'request' })).toBe(0);
    }
    if (process.env.REDIS_URL) expect(after.value('gateway_redis_up')).toBe(1);
    expect(after.family('gateway_nodejs_eventloop_lag_seconds').type).toBe('GAUGE');
    expect(after.value('gateway_process_cpu_user_seconds_total')).toBeGreaterThan(0);

    unsubscribe();
    await client.dispose();
    await waitUntil(async () => (await Scrape.of(s)).value('gateway_graphql_subscriptions_open') === 0, 5_000);
  });

  it('shows an event waiting for its seq as stamping lag', async () => {
    const tenant = await seedTenant(s.t.services);
    await stampCommittedEvents(s.t.services.db, { wait: true });
    await fund(s.t, tenant, 5);
    await s.t.app.metricsText(true);
    const waiting = await Scrape.of(s);
    expect(waiting.value('gateway_events_unstamped')).toBeGreaterThanOrEqual(1);
    expect(waiting.value('gateway_events_stamping_lag_seconds')).toBeGreaterThanOrEqual(0);
    await stampAll(s.t.services.db);
    await s.t.app.metricsText(true);
    expect((await Scrape.of(s)).value('gateway_events_unstamped')).toBe(0);
    expect((await Scrape.of(s)).value('gateway_events_not_fanned_out')).toBe(0);
    // A relay that stamped its last event but has not fanned it out yet.
    await s.t.services.db.execute(sql`update event_fan_out set seq = seq - 1 where id = 1`);
    await s.t.app.metricsText(true);
    expect((await Scrape.of(s)).value('gateway_events_not_fanned_out')).toBe(1);
    await stampAll(s.t.services.db);
    await s.t.app.metricsText(true);
    expect((await Scrape.of(s)).value('gateway_events_not_fanned_out')).toBe(0);
  });

  it('keeps /metrics closed in production without a token, and asks for the token when one is set', async () => {
    const closed = await startTestApp({ config: { NODE_ENV: 'production', SECRETS_KEY: 'A'.repeat(43) + '=' } });
    expect((await closed.t.app.inject({ url: '/metrics' })).statusCode).toBe(404);
    await closed.t.close();
    const token = 'metrics-token-0123456789';
    const guarded = await startTestApp({ config: { METRICS_TOKEN: token } });
    expect((await guarded.t.app.inject({ url: '/metrics' })).statusCode).toBe(401);
    const ok = await guarded.t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('gateway_http_requests_total');
    await guarded.t.close();
  });
});
