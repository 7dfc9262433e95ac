import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { eventStore, recordEvent, recordEvents } from '../../src/domain/events/outbox.js';
import { latestEventSeq, onStamped, stampCommittedEvents, startRelay } from '../../src/domain/events/relay.js';
import { waitUntil } from '../helpers/wait.js';
import { stampAll, stampEvents } from '../helpers/events.js';
import { testDatabase } from '../helpers/database.js';
import { seedTenant, type Tenant, createTestServices } from '../helpers/app.js';

describe('the events outbox', () => {
  let db: Database;
  let tenant: Tenant;
  beforeAll(async () => {
    db = (await testDatabase()).db;
    tenant = await seedTenant(await createTestServices());
  });
  const owner = () => ({ userId: tenant.user.id, environment: 'sandbox' as const });

  it('an event recorded in a transaction that rolls back never exists', async () => {
    const type = `test.${randomUUID()}`;
    await expect(
      db.transaction(async (tx) => {
        await recordEvent(tx, { type, ...owner(), data: {} }, new Date());
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await stampCommittedEvents(db, { wait: true });
    const all = await eventStore.listEventsAfter(db, owner(), 0, 1000);
    expect(all.filter((e) => e.type === type)).toEqual([]);
  });

  it('events stay unstamped (invisible to readers) until the relay runs, then appear in commit order', async () => {
    const before = await latestEventSeq(db);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await recordEvent(db, { type: 'transaction.created', ...owner(), data: { i } }, new Date())).id);
    }
    expect(await eventStore.listEventsAfter(db, owner(), before, 100)).toEqual([]);
    await stampEvents(db, ids);
    const listed = await eventStore.listEventsAfter(db, owner(), before, 100);
    expect(listed.map((e) => e.id)).toEqual(ids);
    const seqs = listed.map((e) => e.seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(5);
    expect(listed[0]).toMatchObject({ type: 'transaction.created', data: { i: 0 }, created: expect.any(Number) });
  });

  it("counts stamping lag from when the event was written, not from the operation's clock reading", async () => {
    // An operation whose clock read an hour ago (a sandbox test clock, or a request that waited
    // long before its commit): its lag is the relay's own, not the hour.
    const hourAgo = new Date(Date.now() - 3_600_000);
    // Events other files left unstamped are stamped first, so the batch heard below is this one's.
    await stampAll(db);
    const lags: number[] = [];
    const unsubscribe = onStamped((batch) => lags.push(...batch));
    try {
      const { id } = await recordEvent(db, { type: 'lag.test', ...owner(), data: {} }, hourAgo);
      await stampEvents(db, [id]);
    } finally {
      unsubscribe();
    }
    expect(lags.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...lags)).toBeLessThan(60_000);
    expect(Math.min(...lags)).toBeGreaterThanOrEqual(0);
  });

  it("one transaction's events are stamped in the order it wrote them, though they share one clock reading", async () => {
    const before = await latestEventSeq(db);
    const at = new Date();
    const ids: string[] = [];
    // One operation writes its events with the same instant; their ids are random, so only the
    // order of writing can tell the relay which came first.
    await db.transaction(async (tx) => {
      for (let i = 0; i < 20; i++)
        ids.push((await recordEvent(tx, { type: 'order.test', ...owner(), data: { i } }, at)).id);
    });
    await stampEvents(db, ids);
    const listed = await eventStore.listEventsAfter(db, owner(), before, 100, ['order.test']);
    expect(listed.map((e) => e.data.i)).toEqual([...Array(20).keys()]);
  });

  it('recordEvents writes a batch in one statement, in the order given, each with its webhook deliveries', async () => {
    const services = await createTestServices();
    const other = await seedTenant(services);
    const { endpoint } = await services.webhooks.create(
      {
        kind: 'api_key',
        credentialId: 'test',
        userId: tenant.user.id,
        environment: 'sandbox',
        abilities: new Set(['READ', 'MANAGE'] as const),
      },
      { url: 'https://hooks.example.test/batch', eventTypes: ['deposit.pending'] },
    );
    const before = await latestEventSeq(db);
    const at = new Date();
    const batch = [0, 1, 2, 3].map((i) => ({
      type: i % 2 === 0 ? 'deposit.pending' : 'payout.processing',
      ...(i === 3 ? { userId: other.user.id, environment: 'sandbox' as const } : owner()),
      data: { i },
    }));
    const recorded = await db.transaction((tx) => recordEvents(tx, batch, at));
    expect(recorded.map((e) => e.data.i)).toEqual([0, 1, 2, 3]);
    await stampEvents(
      db,
      recorded.map((e) => e.id),
    );
    const listed = await eventStore.listEventsAfter(db, owner(), before, 100, ['deposit.pending', 'payout.processing']);
    expect(listed.map((e) => [e.id, e.data.i])).toEqual(recorded.slice(0, 3).map((e) => [e.id, e.data.i]));
    // The endpoint takes deposit.pending only: deliveries for events 0 and 2, none for the other owner's.
    const deliveries = await services.webhooks.deliveries(
      {
        kind: 'api_key',
        credentialId: 'test',
        userId: tenant.user.id,
        environment: 'sandbox',
        abilities: new Set(['READ', 'MANAGE'] as const),
      },
      endpoint.id,
      50,
    );
    expect(deliveries.map((d) => d.eventId).sort()).toEqual([recorded[0]!.id, recorded[2]!.id].sort());
  });

  it('the relay loop stamps a recorded event at once, not at its idle poll', async () => {
    // An idle poll of a minute: only the hint from recordEvent can get the event stamped in time.
    const relay = startRelay(db, { idleMs: 60_000 });
    try {
      const { id } = await db.transaction((tx) =>
        recordEvent(tx, { type: 'relay.prompt', ...owner(), data: {} }, new Date()),
      );
      await waitUntil(async () => (await eventStore.findEventById(db, id))?.seq != null, 10_000);
    } finally {
      await relay.stop();
    }
  });

  it('readers page by seq with no gap and no repeat', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await recordEvent(db, { type: 'page.test', ...owner(), data: { i } }, new Date())).id);
    await stampEvents(db, ids);
    const seen: number[] = [];
    let after = 0;
    for (;;) {
      const page = await eventStore.listEventsAfter(db, owner(), after, 3, ['page.test']);
      if (page.length === 0) break;
      seen.push(...page.map((e) => e.data.i as number));
      after = page.at(-1)!.seq!;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});
