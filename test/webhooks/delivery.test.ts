import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { relayThenRunDue } from '../helpers/events.js';
import { Receiver } from '../helpers/receiver.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('webhook delivery', () => {
  const clock = new ManualClock(new Date());
  let t: TestApp;
  let receiver: Receiver;
  let runner: JobRunner;

  beforeAll(async () => {
    t = await createTestApp({ clock, isolated: true });
    // The answer timeout is real time: long enough that a receiver on a loaded machine answers
    // within it (each test runs the runner once), short enough for the one that never answers.
    // Each run follows a relay round, as the workers run them: the relay writes the deliveries.
    runner = new JobRunner(t.services.db, clock, [
      new WebhookDeliveryHandler(t.services.db, clock, t.services.secrets, { timeoutMs: 2000 }),
    ]);
  });
  afterAll(() => t.close());
  afterEach(() => receiver?.stop());
  // Receivers check webhook-timestamp against real time, so each test starts at the real time;
  // jobs other tests left scheduled later are then not due.
  beforeEach(() => clock.set(new Date()));

  const api = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });

  async function setUp(eventTypes: string[] = ['*']) {
    const tenant = await seedTenant(t.services);
    receiver = await new Receiver().start();
    const created = await api(tenant.keys.ACCOUNT_MANAGEMENT, 'POST', '/api/v1/webhooks', {
      url: receiver.url,
      eventTypes,
    });
    expect(created.statusCode).toBe(201);
    const { endpoint, secret } = created.json().data;
    return { tenant, endpoint, secret: secret as string };
  }

  const emit = (
    tenant: Tenant,
    type = 'deposit.completed',
    environment: 'sandbox' | 'production' = 'sandbox',
    data: Record<string, unknown> = { reference: 'DEP-1', amount: 5000 },
  ) =>
    t.services.db.transaction((tx) =>
      recordEvent(tx, { type, userId: tenant.user.id, environment, data }, clock.now()),
    );

  const deliveries = async (tenant: Tenant, endpointId: string) =>
    (await api(tenant.keys.FULL_ACCESS, 'GET', `/api/v1/webhooks/${endpointId}/deliveries`)).json().data;

  it('POSTs the envelope with both signature schemes, which a receiver verifies', async () => {
    const { tenant, secret } = await setUp();
    const event = await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(JSON.parse(request!.body)).toEqual({
      id: event.id,
      type: 'deposit.completed',
      created: event.created,
      data: { reference: 'DEP-1', amount: 5000 },
    });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-service-signature']).toBe(
      createHmac('sha256', secret).update(request!.body).digest('hex'),
    );
    const verified = new Webhook(secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    });
    expect(verified).toMatchObject({ id: event.id });
    expect(request!.headers['webhook-id']).toBe(event.id);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`).verify(
        request!.body,
        request!.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('retries after exactly 1 min, 5 min, 30 min, 2 h and 6 h, then marks the delivery failed', async () => {
    const { tenant, endpoint } = await setUp();
    receiver.answer = () => 500;
    const start = clock.now().getTime();
    await emit(tenant);
    expect(await relayThenRunDue(t.services.db, runner)).toBe(1);
    let previous = start;
    let sent = 1;
    for (const delay of [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR]) {
      clock.set(new Date(previous + delay - 1));
      await relayThenRunDue(t.services.db, runner);
      expect(receiver.received).toHaveLength(sent);
      clock.set(new Date(previous + delay));
      await relayThenRunDue(t.services.db, runner);
      expect(receiver.received).toHaveLength(++sent);
      previous += delay;
    }
    clock.advance(24 * HOUR);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(6);
    const [delivery] = await deliveries(tenant, endpoint.id);
    expect(delivery).toMatchObject({ status: 'failed', attemptCount: 6, nextAttemptAt: null });
    expect(delivery.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 500, 500, 500, 500]);
    expect(delivery.attempts[0].responseSnippet).toBe('status 500');
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
  });

  it('succeeds on a later attempt and stops retrying', async () => {
    const { tenant, endpoint } = await setUp();
    const statuses = [503, 302, 204];
    receiver.answer = () => statuses.shift() ?? 200;
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    clock.advance(MINUTE);
    await relayThenRunDue(t.services.db, runner);
    clock.advance(5 * MINUTE);
    await relayThenRunDue(t.services.db, runner);
    clock.advance(30 * MINUTE);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(3);
    const [delivery] = await deliveries(tenant, endpoint.id);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([503, 302, 204]);
  });

  it('counts a receiver that does not answer in time as a failure', async () => {
    const { tenant, endpoint } = await setUp();
    receiver.answer = () => 'hang';
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    const [delivery] = await deliveries(tenant, endpoint.id);
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/No answer within/) });
  });

  it('a 410 disables the endpoint; later events are not delivered until it is enabled again', async () => {
    const { tenant, endpoint } = await setUp();
    receiver.answer = () => 410;
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    const disabled = (await api(tenant.keys.FULL_ACCESS, 'GET', `/api/v1/webhooks/${endpoint.id}`)).json().data;
    expect(disabled).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/410/) });
    expect((await deliveries(tenant, endpoint.id))[0].status).toBe('failed');
    await emit(tenant);
    clock.advance(HOUR);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(1);
    receiver.answer = () => 200;
    await api(tenant.keys.FULL_ACCESS, 'PATCH', `/api/v1/webhooks/${endpoint.id}`, { enabled: true });
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(2);
  });

  it('a delivery can be re-sent by hand, and a test event goes to one endpoint only', async () => {
    const { tenant, endpoint } = await setUp();
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    const [delivery] = await deliveries(tenant, endpoint.id);
    const resend = await api(
      tenant.keys.ACCOUNT_MANAGEMENT,
      'POST',
      `/api/v1/webhooks/deliveries/${delivery.id}/resend`,
    );
    expect(resend.statusCode).toBe(202);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    const [after] = await deliveries(tenant, endpoint.id);
    expect(after.attempts.map((a: { manual: boolean }) => a.manual)).toEqual([false, true]);

    const other = await new Receiver().start();
    await api(tenant.keys.ACCOUNT_MANAGEMENT, 'POST', '/api/v1/webhooks', { url: other.url });
    const test = await api(tenant.keys.ACCOUNT_MANAGEMENT, 'POST', `/api/v1/webhooks/${endpoint.id}/test`);
    expect(test.statusCode).toBe(202);
    await relayThenRunDue(t.services.db, runner);
    expect(JSON.parse(receiver.received[2]!.body).type).toBe('webhook.test');
    expect(other.received).toHaveLength(0);
    await other.stop();

    const stranger = await seedTenant(t.services);
    expect(
      (await api(stranger.keys.FULL_ACCESS, 'POST', `/api/v1/webhooks/deliveries/${delivery.id}/resend`)).statusCode,
    ).toBe(404);
    expect((await api(stranger.keys.FULL_ACCESS, 'GET', `/api/v1/webhooks/${endpoint.id}`)).statusCode).toBe(404);
  });

  it('a re-send by hand neither shortens nor lengthens the retry schedule, and gets its own attempt number', async () => {
    const { tenant, endpoint } = await setUp();
    receiver.answer = () => 500;
    const start = clock.now().getTime();
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner); // scheduled attempt 1 fails: next at +1 min
    const [delivery] = await deliveries(tenant, endpoint.id);
    await api(tenant.keys.FULL_ACCESS, 'POST', `/api/v1/webhooks/deliveries/${delivery.id}/resend`);
    await api(tenant.keys.FULL_ACCESS, 'POST', `/api/v1/webhooks/deliveries/${delivery.id}/resend`);
    await relayThenRunDue(t.services.db, runner); // two hand re-sends, run together
    clock.set(new Date(start + MINUTE - 1));
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(3);
    clock.set(new Date(start + MINUTE));
    await relayThenRunDue(t.services.db, runner); // scheduled attempt 2, still at +1 min
    clock.set(new Date(start + MINUTE + 5 * MINUTE));
    await relayThenRunDue(t.services.db, runner); // scheduled attempt 3, 5 min after attempt 2
    const [after] = await deliveries(tenant, endpoint.id);
    expect(receiver.received).toHaveLength(5);
    expect(after.attempts.map((a: { attemptNumber: number; manual: boolean }) => [a.attemptNumber, a.manual])).toEqual([
      [1, false],
      [2, true],
      [3, true],
      [4, false],
      [5, false],
    ]);
    expect(after).toMatchObject({
      status: 'pending',
      attemptCount: 5,
      nextAttemptAt: new Date(start + 6 * MINUTE + 30 * MINUTE).toISOString(),
    });
  });

  it('a deleted endpoint receives nothing more, and its pending retries stop', async () => {
    const { tenant, endpoint } = await setUp();
    receiver.answer = () => 503;
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    expect((await api(tenant.keys.FULL_ACCESS, 'DELETE', `/api/v1/webhooks/${endpoint.id}`)).statusCode).toBe(200);
    await emit(tenant);
    clock.advance(MINUTE);
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(1);
    expect((await api(tenant.keys.FULL_ACCESS, 'GET', `/api/v1/webhooks/${endpoint.id}`)).statusCode).toBe(404);
    const listed = (await api(tenant.keys.FULL_ACCESS, 'GET', '/api/v1/webhooks'))
      .json()
      .data.map((e: { id: string }) => e.id);
    expect(listed).not.toContain(endpoint.id);
  });

  it("an endpoint gets only the kinds it chose, and only its own environment's events", async () => {
    const { tenant } = await setUp(['deposit.completed', 'payout.failed']);
    await emit(tenant, 'deposit.completed');
    await emit(tenant, 'deposit.failed');
    await emit(tenant, 'payout.failed');
    await emit(tenant, 'deposit.completed', 'production');
    const stranger = await seedTenant(t.services);
    await emit(stranger, 'deposit.completed');
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received.map((r) => JSON.parse(r.body).type).sort()).toEqual([
      'deposit.completed',
      'payout.failed',
    ]);
  });

  it('during a secret rotation both secrets sign; a receiver still on the old secret verifies x-service-signature until the grace ends', async () => {
    const { tenant, endpoint, secret: oldSecret } = await setUp();
    const rotated = await api(tenant.keys.FULL_ACCESS, 'POST', `/api/v1/webhooks/${endpoint.id}/rotate-secret`, {
      gracePeriodSeconds: 3600,
    });
    expect(rotated.statusCode).toBe(201);
    const newSecret = rotated.json().data.secret as string;
    expect(newSecret).not.toBe(oldSecret);
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    const request = receiver.received[0]!;
    const headers = request.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(oldSecret).verify(request.body, headers)).not.toThrow();
    expect(() => new Webhook(newSecret).verify(request.body, headers)).not.toThrow();
    const seedSignature = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
    // The receiver that has not switched yet: the seed header is still keyed with the old secret.
    expect(headers['x-service-signature']).toBe(seedSignature(oldSecret, request.body));
    // The receiver that switched early finds the new secret's signature beside it.
    expect(headers['x-service-signature-next']).toBe(seedSignature(newSecret, request.body));

    clock.advance(3601 * 1000);
    await emit(tenant);
    await relayThenRunDue(t.services.db, runner);
    const later = receiver.received[1]!.headers as Record<string, string>;
    expect(later['webhook-signature']!.split(' ')).toHaveLength(1);
    // After the grace the seed header switches to the new secret, and the -next header is gone.
    expect(later['x-service-signature']).toBe(seedSignature(newSecret, receiver.received[1]!.body));
    expect(later['x-service-signature-next']).toBeUndefined();
    // The clock is an hour ahead of real time here, so compare signatures rather than verify.
    const resigned = (secret: string) =>
      new Webhook(secret).sign(
        later['webhook-id']!,
        new Date(Number(later['webhook-timestamp']) * 1000),
        receiver.received[1]!.body,
      );
    expect(later['webhook-signature']).toBe(resigned(newSecret));
    expect(later['webhook-signature']).not.toBe(resigned(oldSecret));
  });

  it('stores the secret sealed: neither the listing nor the database shows it', async () => {
    const { tenant, endpoint, secret } = await setUp();
    const listing = await api(tenant.keys.FULL_ACCESS, 'GET', '/api/v1/webhooks');
    expect(listing.body).not.toContain(secret);
    expect(listing.json().data.map((e: { id: string }) => e.id)).toContain(endpoint.id);
    const rows = await t.services.db.query.webhookEndpoints.findMany();
    expect(JSON.stringify(rows)).not.toContain(secret.slice(6));
  });

  it('validates input, naming the field', async () => {
    const tenant = await seedTenant(t.services);
    const badKind = await api(tenant.keys.FULL_ACCESS, 'POST', '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/x',
      eventTypes: ['deposit.exploded'],
    });
    expect(badKind.statusCode).toBe(400);
    expect(badKind.json().details[0].field).toMatch(/^eventTypes/);
    const badUrl = await api(tenant.keys.FULL_ACCESS, 'POST', '/api/v1/webhooks', { url: 'not a url' });
    expect(badUrl.json()).toMatchObject({ statusCode: 400, message: expect.stringMatching(/url/) });
    const readOnly = await api(tenant.keys.READ_ONLY, 'POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/x' });
    expect(readOnly.statusCode).toBe(403);
  });
});
