import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { events, webhookEndpoints } from '../../src/db/schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { relayThenRunDue } from '../helpers/events.js';
import { Receiver } from '../helpers/receiver.js';

const DAY = 86_400_000;

describe('endpoint health: circuit breaker and automatic disabling', () => {
  const clock = new ManualClock(new Date('2034-01-01T00:00:00Z'));
  let t: TestApp;
  let runner: JobRunner;
  let receiver: Receiver;
  beforeAll(async () => {
    ({ t } = await startTestApp({ isolated: true, clock }));
    receiver = await new Receiver().start();
    runner = new JobRunner(t.services.db, clock, [
      new WebhookDeliveryHandler(t.services.db, clock, t.services.secrets, { timeoutMs: 2_000 }),
    ]);
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  const setUp = async () => {
    const tenant = await seedTenant(t.services);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
      payload: { url: receiver.url },
    });
    return { tenant, endpointId: created.json().data.endpoint.id as string };
  };
  const emit = (tenant: Tenant) =>
    recordEvent(
      t.services.db,
      { type: 'payout.completed', userId: tenant.user.id, environment: 'sandbox', data: {} },
      clock.now(),
    );
  // Relay rounds then claims, as the workers run them, until nothing is due.
  const drain = async () => {
    while ((await relayThenRunDue(t.services.db, runner)) > 0);
  };
  const endpointRow = async (id: string) =>
    (await t.services.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0]!;

  it('opens after five straight failures and holds the backlog back without attempts; a success closes it', async () => {
    receiver.answer = () => 500;
    const { tenant, endpointId } = await setUp();
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) ids.add((await emit(tenant)).id);
    // Only this tenant's deliveries count (on PGlite the database is shared with earlier test files).
    const mine = () => receiver.received.filter((r) => ids.has(String(r.headers['webhook-id'])));
    await drain();
    // Claims of four (the per-endpoint limit) were sent until the fifth failure opened the circuit
    // (those of the second claim that had not started yet saw it open); the rest waits.
    const sent = mine().length;
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(sent).toBeLessThanOrEqual(8);
    const open = await endpointRow(endpointId);
    expect(open.consecutiveFailures).toBeGreaterThanOrEqual(Math.max(5, sent));
    expect(open.consecutiveFailures).toBeLessThanOrEqual(8);
    expect(open.circuitOpenUntil!.getTime()).toBeGreaterThanOrEqual(clock.now().getTime() + 30_000);
    const [held] = await queryRows<{ n: string | number; earliest: string | Date }>(
      t.services.db,
      sql`select count(*) as n, min(run_at) as earliest from jobs where concurrency_key = ${endpointId} and status = 'pending'`,
    );
    expect(Number(held!.n)).toBe(12);
    expect(new Date(held!.earliest).getTime()).toBeGreaterThanOrEqual(clock.now().getTime() + 30_000);

    clock.advance(29_000);
    await drain();
    expect(mine()).toHaveLength(sent); // still open

    receiver.answer = () => 200;
    clock.advance(3_600_000);
    await drain();
    expect(new Set(mine().map((r) => r.headers['webhook-id']))).toEqual(ids); // every delivery went
    const [left] = await queryRows<{ n: string | number }>(
      t.services.db,
      sql`select count(*) as n from webhook_deliveries where endpoint_id = ${endpointId} and status <> 'succeeded'`,
    );
    expect(Number(left!.n)).toBe(0);
    expect(await endpointRow(endpointId)).toMatchObject({
      consecutiveFailures: 0,
      failingSince: null,
      circuitOpenUntil: null,
      enabled: true,
    });
  });

  it('after five days of nothing but failures the endpoint is disabled and its owner told by event', async () => {
    receiver.answer = () => 503;
    const { tenant, endpointId } = await setUp();
    await emit(tenant);
    await drain();
    expect((await endpointRow(endpointId)).failingSince).toEqual(clock.now());
    clock.advance(4 * DAY);
    await emit(tenant);
    await drain();
    expect((await endpointRow(endpointId)).enabled).toBe(true); // four days: still trying
    clock.advance(DAY);
    await emit(tenant);
    await drain();
    const row = await endpointRow(endpointId);
    expect(row.enabled).toBe(false);
    expect(row.disabledReason).toMatch(/^Disabled automatically: every delivery failed since .* \(5 days\)\.$/);
    const told = await t.services.db.select().from(events).where(eq(events.userId, tenant.user.id));
    expect(told.filter((e) => e.type === 'webhook.endpoint.disabled').map((e) => e.data)).toEqual([
      expect.objectContaining({ endpointId, url: receiver.url }),
    ]);
    const listing = await t.app.inject({ url: '/api/v1/webhooks', headers: { 'x-api-key': tenant.keys.FULL_ACCESS } });
    expect(listing.json().data.find((e: { id: string }) => e.id === endpointId)).toMatchObject({
      enabled: false,
      disabledReason: row.disabledReason,
    });
  });
});

describe('the per-tenant cap on pending work', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp({ isolated: true, config: { TENANT_PENDING_JOBS_MAX: 5 } }));
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After to a tenant over it, lets it read, and leaves other tenants alone', async () => {
    await t.services.db.execute(sql`insert into jobs (kind, lane, tenant, run_at)
      select 'webhook.deliver', 'webhooks', ${tenant.user.id}, now() + interval '1 day' from generate_series(1, 6)`);
    const deposit = (key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/wallet/deposits/bank-transfer',
        headers: { 'x-api-key': key },
        payload: { amount: 10 },
      });
    const refused = await deposit(tenant.keys.TRANSACTIONS);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.json()).toMatchObject({ statusCode: 429, retryAfter: 30 });
    expect(refused.json().message).toMatch(/background work is pending/);
    const read = await t.app.inject({ url: '/api/v1/wallet/balance', headers: { 'x-api-key': tenant.keys.READ_ONLY } });
    expect(read.statusCode).toBe(200);
    const other = await seedTenant(t.services);
    expect((await deposit(other.keys.TRANSACTIONS)).statusCode).toBe(201);
  });
});
