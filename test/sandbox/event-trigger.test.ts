import { keyBusy } from '../../src/domain/money/key-claim.js';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { TRIGGERABLE_KINDS } from '../../src/domain/sandbox/trigger-kinds.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { EVENT_KINDS } from '../../src/domain/webhooks/event-kinds.js';
import { graphql, seedTenant, type StartedTestApp, startTestApp, type Tenant } from '../helpers/app.js';
import { subscribeToEvents } from '../helpers/event-subscriber.js';
import { relayThenRunDue, stampAll } from '../helpers/events.js';
import { Receiver } from '../helpers/receiver.js';
import { rest } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';

const TRIGGER = '/api/v1/events/sandbox/trigger';

describe('sandbox event trigger', () => {
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({ listen: true, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    // Deliveries as the workers make them: the relay fans each stamped event out, the runner posts it.
    runner = new JobRunner(s.t.services.db, systemClock, [
      new WebhookDeliveryHandler(s.t.services.db, systemClock, s.t.services.secrets, { timeoutMs: 10_000 }),
    ]);
  });
  afterAll(() => s.t.close());

  /** A fresh tenant with a webhook endpoint for `kinds` on a local receiver. */
  async function tenantWithReceiver(kinds: string[]) {
    const tenant = await seedTenant(s.t.services);
    const receiver = await new Receiver().start();
    const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/webhooks', {
      url: receiver.url,
      eventTypes: kinds,
    });
    expect(created.statusCode).toBe(201);
    return { tenant, receiver, secret: created.json().data.secret as string };
  }

  const trigger = (
    tenant: Tenant,
    type: unknown,
    headers: Record<string, string> = {},
    key = tenant.keys.TRANSACTIONS,
  ) => rest(s.t, key)('POST', TRIGGER, { type }, headers);

  it('covers every kind the gateway emits but the two webhook kinds, which have their own causes', () => {
    expect([...TRIGGERABLE_KINDS].sort()).toEqual(EVENT_KINDS.filter((kind) => !kind.startsWith('webhook.')).sort());
  });

  it.each(TRIGGERABLE_KINDS)(
    '%s: caused by its sandbox operation, delivered signed to a webhook receiver and streamed to a subscriber',
    async (kind) => {
      const { tenant, receiver, secret } = await tenantWithReceiver([kind]);
      const subscriber = subscribeToEvents(s.wsUrl, tenant.keys.READ_ONLY, { types: [kind] });
      try {
        const response = await trigger(tenant, kind);
        expect(response.statusCode, response.body).toBe(201);
        const answer = response.json().data as {
          type: string;
          eventId: string;
          events: Array<{ id: string; type: string }>;
          references: string[];
          description: string;
        };
        expect(answer.type).toBe(kind);
        expect(answer.events).toContainEqual({ id: answer.eventId, type: kind });
        expect(answer.references.length).toBeGreaterThan(0);

        // The webhook: the relay fans the event out to the endpoint, the delivery job posts it signed.
        await waitUntil(async () => {
          await relayThenRunDue(s.t.services.db, runner);
          return receiver.received.some((r) => r.headers['webhook-id'] === answer.eventId);
        }, 20_000);
        const request = receiver.received.find((r) => r.headers['webhook-id'] === answer.eventId)!;
        const body = JSON.parse(request.body) as { id: string; type: string; data: Record<string, unknown> };
        expect(body).toMatchObject({ id: answer.eventId, type: kind });
        expect(request.headers['x-service-signature']).toBe(
          createHmac('sha256', secret).update(request.body).digest('hex'),
        );
        expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toMatchObject({
          id: answer.eventId,
        });
        // The payload is a real record's: its reference is one the operations made.
        expect(answer.references).toContain(body.data['reference']);

        // The subscription: the same event, the same data.
        const streamed = await subscriber.until((e) => e.id === answer.eventId);
        expect(subscriber.failure()).toBeUndefined();
        expect(streamed).toMatchObject({ type: kind, data: body.data });
      } finally {
        await subscriber.close();
        await receiver.stop();
      }
    },
  );

  it('refuses a production key with 403 naming why, having run nothing', async () => {
    const tenant = await seedTenant(s.t.services);
    const response = await trigger(tenant, 'payout.failed', {}, tenant.productionKey);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect(response.json().message).toMatch(/sandbox key only: this is a production key/);
    const graph = await graphql(
      s.t.app,
      tenant.productionKey,
      'mutation { triggerSandboxEvent(type: "payout.failed") { eventId } }',
    );
    expect(graph.body.errors?.[0]?.extensions['code']).toBe('FORBIDDEN');
    await stampAll(s.t.services.db);
    const feed = await rest(s.t, tenant.productionKey)('GET', '/api/v1/events');
    expect(feed.json().data.events).toEqual([]);
  });

  it('refuses an unknown kind naming the field and every kind it allows', async () => {
    const tenant = await seedTenant(s.t.services);
    for (const type of ['payout.exploded', 'webhook.test', '', 42]) {
      const response = await trigger(tenant, type);
      expect(response.statusCode, String(type)).toBe(400);
      const body = response.json();
      expect(body.message).toMatch(/\btype\b/);
      for (const kind of TRIGGERABLE_KINDS) expect(body.message).toContain(kind);
    }
    const graph = await graphql(
      s.t.app,
      tenant.keys.TRANSACTIONS,
      'mutation { triggerSandboxEvent(type: "payout.exploded") { eventId } }',
    );
    expect(graph.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'type' });
    for (const kind of TRIGGERABLE_KINDS) expect(graph.body.errors?.[0]?.message).toContain(kind);
  });

  it('needs a key that may move money', async () => {
    const tenant = await seedTenant(s.t.services);
    expect((await trigger(tenant, 'deposit.completed', {}, tenant.keys.READ_ONLY)).statusCode).toBe(403);
  });

  it('under one Idempotency-Key answers the same events once; another kind under it is 422', async () => {
    const tenant = await seedTenant(s.t.services);
    const headers = { 'idempotency-key': 'trigger-once' };
    const first = await trigger(tenant, 'payout.completed', headers);
    expect(first.statusCode, first.body).toBe(201);
    const again = await trigger(tenant, 'payout.completed', headers);
    expect(again.statusCode).toBe(201);
    expect(again.json().data).toEqual(first.json().data);
    // One funding and one payout: the balance moved once (₦1,025 in, ₦1,025 out).
    const balance = await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/balance');
    expect(balance.json().data).toMatchObject({ available: 0 });
    // The feed holds exactly the events the answer names: nothing was written twice.
    await stampAll(s.t.services.db);
    const feed = await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/events');
    expect(feed.json().data.events.map((e: { id: string; type: string }) => ({ id: e.id, type: e.type }))).toEqual(
      first.json().data.events,
    );
    const other = await trigger(tenant, 'payout.failed', headers);
    expect(other.statusCode).toBe(422);
  });

  it("a step's key still held by an earlier attempt is a retry-later, not the trigger key's lasting answer", async () => {
    const tenant = await seedTenant(s.t.services);
    const headers = { 'idempotency-key': 'trigger-step-busy' };
    const payouts = s.t.services.payouts;
    const withdraw = payouts.withdraw;
    payouts.withdraw = async () => {
      throw keyBusy();
    };
    try {
      const busy = await trigger(tenant, 'payout.completed', headers);
      expect(busy.statusCode, busy.body).toBe(503);
      expect(busy.headers['retry-after']).toBe('5');
    } finally {
      payouts.withdraw = withdraw;
    }
    const retried = await trigger(tenant, 'payout.completed', headers);
    expect(retried.statusCode, retried.body).toBe(201);
  });

  it('a retry under the same key after a failure part-way replays the steps done: the wallet is funded once', async () => {
    const tenant = await seedTenant(s.t.services);
    const headers = { 'idempotency-key': 'trigger-retried' };
    const payouts = s.t.services.payouts;
    const withdraw = payouts.withdraw;
    // The funding commits, then the payout's step fails as a lost connection would.
    payouts.withdraw = async () => {
      throw new Error('connection terminated');
    };
    try {
      expect((await trigger(tenant, 'payout.completed', headers)).statusCode).toBeGreaterThanOrEqual(500);
    } finally {
      payouts.withdraw = withdraw;
    }
    const retried = await trigger(tenant, 'payout.completed', headers);
    expect(retried.statusCode, retried.body).toBe(201);
    const balance = await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/balance');
    expect(balance.json().data).toMatchObject({ available: 0 });
    await stampAll(s.t.services.db);
    const feed = await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/events?types=deposit.completed');
    expect(feed.json().data.events).toHaveLength(1);
  });
});
