import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { DELIVERY_JOB } from '../../src/domain/webhooks/webhook.js';
import { createTestApp, sandboxPrincipal, type TestApp } from '../helpers/app.js';
import { stampAll } from '../helpers/events.js';

describe("an account's event history and re-sending an event to one endpoint", () => {
  let t: TestApp;
  beforeAll(async () => {
    // Its own database: the delivery jobs written here (to a closed port) are due at once, and no
    // other file's job runner should find them.
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  const record = (principal: Principal, type: string, n: number) =>
    recordEvent(
      t.services.db,
      { type, userId: principal.userId, environment: principal.environment, data: { n } },
      t.services.clock.now(),
    );
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'resolved',
      (error: { code?: string }) => error.code,
    );
  const deliveryJobsOf = async (deliveryId: string) =>
    (
      await t.services.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, DELIVERY_JOB)))
    ).filter((job) => (job.payload as { deliveryId?: string }).deliveryId === deliveryId);

  it('lists the owner’s events newest first, a page at a time, filtered by kind, and no one else’s', async () => {
    const principal = await sandboxPrincipal(t.services);
    const stranger = await sandboxPrincipal(t.services);
    for (let n = 1; n <= 5; n++) await record(principal, n % 2 ? 'deposit.completed' : 'payout.completed', n);
    await record(stranger, 'deposit.completed', 99);
    await record({ ...principal, environment: 'production' }, 'deposit.completed', 98);
    await stampAll(t.services.db);

    const one = await t.services.events.history(principal, { first: 2 });
    expect(one.events.map((e) => e.data.n)).toEqual([5, 4]);
    const two = await t.services.events.history(principal, { first: 2, before: one.nextBefore! });
    expect(two.events.map((e) => e.data.n)).toEqual([3, 2]);
    const three = await t.services.events.history(principal, { first: 2, before: two.nextBefore! });
    expect(three.events.map((e) => e.data.n)).toEqual([1]);
    expect(three.nextBefore).toBeNull();

    const deposits = await t.services.events.history(principal, { first: 10, types: ['deposit.completed'] });
    expect(deposits.events.map((e) => e.data.n)).toEqual([5, 3, 1]);
    expect(await codeOf(t.services.events.history(principal, { first: 10, before: Number.NaN }))).toBe(
      'BAD_USER_INPUT',
    );
    expect(await codeOf(t.services.events.history(principal, { first: 0 }))).toBe('BAD_USER_INPUT');
  });

  it('shows where each event went; re-sends a delivered one as a manual attempt and writes a new delivery for an endpoint that never got it', async () => {
    const principal = await sandboxPrincipal(t.services);
    const { webhooks } = t.services;
    const everything = (await webhooks.create(principal, { url: 'http://127.0.0.1:9/all' })).endpoint;
    const payoutsOnly = (
      await webhooks.create(principal, { url: 'http://127.0.0.1:9/payouts', eventTypes: ['payout.completed'] })
    ).endpoint;
    const event = await record(principal, 'deposit.completed', 1);
    await stampAll(t.services.db);
    const addedLater = (await webhooks.create(principal, { url: 'http://127.0.0.1:9/later' })).endpoint;
    const disabled = (await webhooks.create(principal, { url: 'http://127.0.0.1:9/off', enabled: false })).endpoint;

    const before = await webhooks.deliveriesOfEvent(principal, event.id);
    expect(before.map((d) => d.endpointUrl)).toEqual([everything.url]);

    // The delivered endpoint: the same delivery, again, by hand.
    const again = await webhooks.resendEvent(principal, event.id, everything.id);
    expect(again).toMatchObject({ created: false, delivery: { id: before[0]!.id } });
    expect((await deliveryJobsOf(before[0]!.id)).map((j) => j.payload)).toContainEqual(
      expect.objectContaining({ deliveryId: before[0]!.id, manual: true }),
    );

    // An endpoint added after the event: a new delivery and its job; a second re-send reuses it.
    const added = await webhooks.resendEvent(principal, event.id, addedLater.id);
    expect(added.created).toBe(true);
    expect(await deliveryJobsOf(added.delivery.id)).toHaveLength(1);
    expect((await webhooks.resendEvent(principal, event.id, addedLater.id)).created).toBe(false);
    const after = await webhooks.deliveriesOfEvent(principal, event.id);
    expect(after.map((d) => d.endpointUrl)).toEqual([everything.url, addedLater.url]);

    // Refused: a kind the endpoint does not take, a disabled endpoint, someone else's event or endpoint.
    expect(await codeOf(webhooks.resendEvent(principal, event.id, payoutsOnly.id))).toBe('BAD_USER_INPUT');
    expect(await codeOf(webhooks.resendEvent(principal, event.id, disabled.id))).toBe('BAD_USER_INPUT');
    const stranger = await sandboxPrincipal(t.services);
    expect(await codeOf(webhooks.resendEvent(stranger, event.id, everything.id))).toBe('NOT_FOUND');
    const theirs = (await webhooks.create(stranger, { url: 'http://127.0.0.1:9/theirs' })).endpoint;
    expect(await codeOf(webhooks.resendEvent(principal, event.id, theirs.id))).toBe('NOT_FOUND');
    expect(await codeOf(webhooks.resendEvent(principal, 'not-an-id', everything.id))).toBe('NOT_FOUND');
    expect(await webhooks.deliveriesOfEvent(stranger, event.id)).toEqual([]);
    expect((await webhooks.deliverySummariesOfEvents(stranger, [event.id])).size).toBe(0);
  });

  it('sends a test event only to the endpoint it tests', async () => {
    const principal = await sandboxPrincipal(t.services);
    const { webhooks } = t.services;
    const tested = (await webhooks.create(principal, { url: 'http://127.0.0.1:9/tested' })).endpoint;
    const other = (await webhooks.create(principal, { url: 'http://127.0.0.1:9/other' })).endpoint;
    const delivery = await webhooks.sendTest(principal, tested.id);
    await stampAll(t.services.db);
    expect(await codeOf(webhooks.resendEvent(principal, delivery.eventId, other.id))).toBe('BAD_USER_INPUT');
    expect((await webhooks.resendEvent(principal, delivery.eventId, tested.id)).created).toBe(false);
  });
});
