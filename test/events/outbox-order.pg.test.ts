import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { eventStore, recordEvent } from '../../src/domain/events/outbox.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { stampEvents } from '../helpers/events.js';
import { seedTenant, type Tenant, createTestServices } from '../helpers/app.js';
import { onPostgres, testDatabase } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/** A promise with its resolver, to hold a transaction open until the test lets it go. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe.skipIf(!onPostgres)('outbox ordering with concurrent transactions (PostgreSQL)', () => {
  let db: Database;
  let tenant: Tenant;
  beforeAll(async () => {
    db = (await testDatabase()).db;
    tenant = await seedTenant(await createTestServices());
  });
  const owner = () => ({ userId: tenant.user.id, environment: 'sandbox' as const });

  it('never lets a reader skip an event whose transaction committed late', async () => {
    await stampCommittedEvents(db, { wait: true });
    const start = (await eventStore.listEventsAfter(db, owner(), 0, 10_000)).at(-1)?.seq ?? 0;

    // T1 inserts first but commits last; T2 inserts second and commits first.
    const hold = gate();
    const t1Inserted = gate();
    const ids: string[] = [];
    const t1 = db.transaction(async (tx) => {
      ids.push((await recordEvent(tx, { type: 'late', ...owner(), data: {} }, new Date())).id);
      t1Inserted.open();
      await hold.promise;
    });
    await t1Inserted.promise;
    await db.transaction(async (tx) => {
      ids.push((await recordEvent(tx, { type: 'early', ...owner(), data: {} }, new Date())).id);
    });

    // T2 has committed while T1 is open: T2 is stamped now, and the reader reads it.
    await stampEvents(db, [ids[1]!]);
    const read = await eventStore.listEventsAfter(db, owner(), start, 100);
    expect(read.map((e) => e.type)).toEqual(['early']);
    const readerCursor = read.at(-1)!.seq!;

    // T1 commits last and is numbered above everything read: resuming after the cursor finds it.
    hold.open();
    await t1;
    await stampEvents(db, ids);
    const resumed = await eventStore.listEventsAfter(db, owner(), readerCursor, 100);
    expect(resumed.map((e) => e.type)).toEqual(['late']);
  });

  it('a tailing reader receives every event exactly once under concurrent writers and relays', async () => {
    await stampCommittedEvents(db, { wait: true });
    let cursor = (await eventStore.listEventsAfter(db, owner(), 0, 100_000)).at(-1)?.seq ?? 0;
    const received: number[] = [];
    let writing = true;

    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 25; i++) {
          await db.transaction(async (tx) => {
            await recordEvent(tx, { type: 'stress', ...owner(), data: { n: w * 100 + i } }, new Date());
            // Random hold so commits interleave out of insert order.
            await new Promise((r) => setTimeout(r, Math.random() * 8));
          });
        }
      })(),
    );
    // Two relays race, as two instances would; the advisory lock lets one stamp at a time.
    const relays = [0, 1].map(async () => {
      while (writing) {
        await stampCommittedEvents(db);
        await new Promise((r) => setTimeout(r, 2));
      }
    });
    // Tails until the writers are done and all 200 events are read (more would be duplicates).
    const reader = waitUntil(
      async () => {
        const page = await eventStore.listEventsAfter(db, owner(), cursor, 50, ['stress']);
        for (const event of page) received.push(event.data.n as number);
        if (page.length > 0) cursor = page.at(-1)!.seq!;
        if (!writing && received.length >= 200) return true;
        if (!writing) await stampCommittedEvents(db, { wait: true });
        return false;
      },
      { timeoutMs: 20_000, intervalMs: 3 },
    );

    await Promise.all(writers);
    writing = false;
    await Promise.all(relays);
    await reader;
    expect(received.length).toBe(200);
    expect(new Set(received).size).toBe(200);
  });
});
