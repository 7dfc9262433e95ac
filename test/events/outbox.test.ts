import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { eventStore, recordEvent } from '../../src/domain/events/outbox.js';
import { latestEventSeq, stampCommittedEvents } from '../../src/domain/events/relay.js';
import { stampEvents } from '../helpers/events.js';
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
