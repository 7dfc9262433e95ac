import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { RELAY_LOCK_KEY, type RelayLoop, stampCommittedEvents, startRelay } from '../../src/domain/events/relay.js';
import { createTestServices } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The relay stamps a committed event whatever else is open on the server, and readers resuming
 * by `seq` still never skip, repeat or reorder: the proof runs with transactions holding ids open
 * in another database of the cluster and in the same database the whole time. This file has a
 * database of its own, so every event in it is the test's and the relay's batches are its alone.
 */

/** A session holding a transaction id open, in the database at `url`, until `release`. */
async function holdTransactionId(url: string): Promise<{ xid: string; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  const { rows } = await client.query<{ xid: string }>('select pg_current_xact_id()::text as xid');
  return {
    xid: rows[0]!.xid,
    async release() {
      await client.query('rollback');
      await client.end();
    },
  };
}

/** Whether `xid` is still running anywhere on the server, as every snapshot sees it. */
async function stillRunning(db: Database, xid: string): Promise<boolean> {
  const [row] = await queryRows<{ running: boolean }>(
    db,
    sql`select pg_snapshot_xmin(pg_current_snapshot()) <= ${xid}::xid8 as running`,
  );
  return row!.running === true;
}

interface Stamped {
  id: string;
  seq: number;
  ordinal: number;
  data: { tx: string; i: number; op?: string; step?: number };
}

describe.skipIf(!onPostgres)('relay stamping beside open transactions (PostgreSQL)', () => {
  let handle: DatabaseHandle;
  let db: Database;
  let url: string;
  let otherUrl: string;
  let userId: string;
  const owner = () => ({ userId, environment: 'sandbox' as const });

  beforeAll(async () => {
    url = await isolatedTestDatabaseUrl();
    otherUrl = await isolatedTestDatabaseUrl();
    handle = await openDatabase({ databaseUrl: url, poolSize: 24 });
    db = handle.db;
    const services = await createTestServices(db);
    userId = (
      await services.users.createUser({ email: `r-${randomUUID()}@example.test`, firstName: 'R', lastName: 'T' })
    ).id;
  });
  afterAll(async () => {
    await handle?.close();
  });

  const stampedOf = async (type: string): Promise<Stamped[]> =>
    (
      await queryRows<{ id: string; seq: unknown; ordinal: unknown; data: Stamped['data'] }>(
        db,
        sql`select id, seq, ordinal, data from events where type = ${type} and seq is not null order by seq`,
      )
    ).map((r) => ({ id: r.id, seq: Number(r.seq), ordinal: Number(r.ordinal), data: r.data }));

  it('stamps committed events while a transaction holds an id open in another database and in this one', async () => {
    const foreign = await holdTransactionId(otherUrl);
    const local = await holdTransactionId(url);
    try {
      expect(await stillRunning(db, foreign.xid)).toBe(true);
      expect(await stillRunning(db, local.xid)).toBe(true);
      const ids: string[] = [];
      await db.transaction(async (tx) => {
        ids.push((await recordEvent(tx, { type: 'beside-open', ...owner(), data: { i: 0 } }, new Date())).id);
      });
      // One round, right after the commit: no waiting for either open transaction.
      expect(await stampCommittedEvents(db, { wait: true })).toBeGreaterThanOrEqual(1);
      const stamped = await stampedOf('beside-open');
      expect(stamped.map((e) => e.id)).toEqual(ids);
      // Both holders were open the whole time.
      expect(await stillRunning(db, foreign.xid)).toBe(true);
      expect(await stillRunning(db, local.xid)).toBe(true);
    } finally {
      await foreign.release();
      await local.release();
    }
  });

  it('numbers an event that committed late above what a reader has already read, so the reader still gets it', async () => {
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    let inserted!: () => void;
    const insertedLate = new Promise<void>((resolve) => (inserted = resolve));
    // The late transaction inserts first (lower txid) and commits last.
    const late = db.transaction(async (tx) => {
      await recordEvent(tx, { type: 'late-or-early', ...owner(), data: { tx: 'late', i: 0 } }, new Date());
      inserted();
      await held;
    });
    await insertedLate;
    await db.transaction(async (tx) => {
      await recordEvent(tx, { type: 'late-or-early', ...owner(), data: { tx: 'early', i: 0 } }, new Date());
    });
    await stampCommittedEvents(db, { wait: true });
    const first = await stampedOf('late-or-early');
    expect(first.map((e) => e.data.tx)).toEqual(['early']);
    const cursor = first[0]!.seq;

    open();
    await late;
    await stampCommittedEvents(db, { wait: true });
    const after = (await stampedOf('late-or-early')).filter((e) => e.seq > cursor);
    expect(after.map((e) => e.data.tx)).toEqual(['late']);
  });

  it('keeps a transaction whole when a batch ends inside it, though an older transaction commits in between', async () => {
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    let inserted!: () => void;
    const olderInserted = new Promise<void>((resolve) => (inserted = resolve));
    // The older transaction (lower txid) commits after the newer one was stamped in part.
    const older = db.transaction(async (tx) => {
      await recordEvent(tx, { type: 'split', ...owner(), data: { tx: 'older', i: 0 } }, new Date());
      inserted();
      await held;
    });
    await olderInserted;
    await db.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) {
        await recordEvent(tx, { type: 'split', ...owner(), data: { tx: 'newer', i } }, new Date());
      }
    });
    await stampCommittedEvents(db, { wait: true, batchSize: 2 });
    open();
    await older;
    await stampCommittedEvents(db, { wait: true, batchSize: 2 });
    const stamped = await stampedOf('split');
    expect(stamped.map((e) => `${e.data.tx}${e.data.i}`)).toEqual(['newer0', 'newer1', 'newer2', 'older0']);
    expect(stamped.map((e) => e.seq - stamped[0]!.seq)).toEqual([0, 1, 2, 3]);
  });

  it('a relay whose sessions default to REPEATABLE READ still numbers after what the previous lock holder stamped', async () => {
    const repeatable = new pg.Pool({
      connectionString: url,
      max: 1,
      options: '-c default_transaction_isolation=repeatable\\ read',
    });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      let id = '';
      await db.transaction(async (tx) => {
        id = (await recordEvent(tx, { type: 'isolation', ...owner(), data: { i: 0 } }, new Date())).id;
      });
      // Another relay holds the lock and has stamped the event, not yet committed.
      await holder.query('begin');
      await holder.query(`select pg_advisory_xact_lock(${RELAY_LOCK_KEY})`);
      await holder.query('update events set seq = (select coalesce(max(seq), 0) + 1 from events) where id = $1', [id]);
      const round = stampCommittedEvents(db, { wait: true, connection: repeatable });
      await waitUntil(async () => {
        const [row] = await queryRows<{ n: unknown }>(
          db,
          sql`select count(*) as n from pg_locks where locktype = 'advisory' and not granted
            and database = (select oid from pg_database where datname = current_database())`,
        );
        return Number(row?.n) > 0;
      });
      await holder.query('commit');
      // Its snapshot is taken after the lock: the event is already stamped, nothing is left to do.
      await expect(round).resolves.toBe(0);
      const stamped = await stampedOf('isolation');
      expect(stamped.map((e) => e.id)).toEqual([id]);
    } finally {
      await holder.end();
      await repeatable.end();
    }
  });

  it('concurrent writers committing in random order, two relays, readers resuming by seq: nothing skipped, repeated or split', async () => {
    const foreign = await holdTransactionId(otherUrl);
    const local = await holdTransactionId(url);
    const relays: RelayLoop[] = [];
    try {
      // Small batches, so batches end inside transactions; two relays race as two instances would.
      for (let r = 0; r < 2; r++) relays.push(startRelay(db, { batchSize: 3, idleMs: 20, busyMs: 2 }));

      const WRITERS = 8;
      const OPS = 12;
      let expected = 0;
      const plan = Array.from({ length: WRITERS }, () =>
        Array.from({ length: OPS }, () => [1 + Math.floor(Math.random() * 4), 1 + Math.floor(Math.random() * 4)]),
      );
      for (const ops of plan) for (const [a, b] of ops) expected += a! + b!;

      let writing = true;
      // Each operation writes two transactions, the second begun after the first committed.
      const writers = plan.map((ops, w) =>
        (async () => {
          for (const [o, sizes] of ops.entries()) {
            for (const [step, size] of sizes.entries()) {
              const txName = `${w}.${o}.${step}`;
              await db.transaction(async (tx) => {
                for (let i = 0; i < size; i++) {
                  await recordEvent(
                    tx,
                    { type: 'stress', ...owner(), data: { tx: txName, i, op: `${w}.${o}`, step } },
                    new Date(),
                  );
                  // Server-side jitter, so transactions commit out of the order of their ids.
                  await tx.execute(sql`select pg_sleep(${Math.random() * 0.006})`);
                }
              });
            }
          }
        })(),
      );

      // Readers resume "after N" page by page (small pages), as API clients and feeds do.
      const readers = Array.from({ length: 3 }, () => ({ cursor: 0, seen: [] as Stamped[] }));
      const readAll = async () => {
        for (const reader of readers) {
          for (;;) {
            const page = (
              await queryRows<{ id: string; seq: unknown; ordinal: unknown; data: Stamped['data'] }>(
                db,
                sql`select id, seq, ordinal, data from events
                    where user_id = ${userId} and environment = 'sandbox' and seq > ${reader.cursor} and type = 'stress'
                    order by seq limit 5`,
              )
            ).map((r) => ({ id: r.id, seq: Number(r.seq), ordinal: Number(r.ordinal), data: r.data }));
            for (const event of page) reader.seen.push(event);
            if (page.length > 0) reader.cursor = page.at(-1)!.seq;
            if (page.length < 5) break;
          }
        }
      };
      const reading = waitUntil(
        async () => {
          await readAll();
          return !writing && readers.every((reader) => reader.seen.length >= expected);
        },
        { timeoutMs: 60_000, intervalMs: 3 },
      );
      await Promise.all(writers);
      writing = false;
      await reading;

      // Everything was read while both holders were still open.
      expect(await stillRunning(db, foreign.xid)).toBe(true);
      expect(await stillRunning(db, local.xid)).toBe(true);

      const all = await stampedOf('stress');
      expect(all.length).toBe(expected);
      for (const reader of readers) {
        // Exactly once each, in seq order.
        expect(reader.seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
      }
      // The numbers have no hole.
      for (let k = 1; k < all.length; k++) expect(all[k]!.seq).toBe(all[k - 1]!.seq + 1);
      // Each transaction's events are contiguous, in the order written.
      const byTx = new Map<string, Stamped[]>();
      for (const e of all) byTx.set(e.data.tx, [...(byTx.get(e.data.tx) ?? []), e]);
      for (const [, list] of byTx) {
        expect(list.map((e) => e.data.i)).toEqual(list.map((_, i) => i));
        expect(list.at(-1)!.seq - list[0]!.seq).toBe(list.length - 1);
      }
      // An operation's second transaction (begun after the first committed) is numbered after it.
      for (const [w, ops] of plan.entries()) {
        for (const o of ops.keys()) {
          const first = byTx.get(`${w}.${o}.0`)!;
          const second = byTx.get(`${w}.${o}.1`)!;
          expect(second[0]!.seq).toBeGreaterThan(first.at(-1)!.seq);
        }
      }
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
      await foreign.release();
      await local.release();
    }
  });
});
