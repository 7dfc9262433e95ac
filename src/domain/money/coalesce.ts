import pg from 'pg';
import type { Database } from '../../db/client.js';
import { inTransaction, runStatement, type Statement, statement, TransactionFailure } from '../../db/plain-sql.js';
import { hintRelays } from '../events/relay.js';

/**
 * The one-statement writes of concurrent money operations (bills, deposits, payouts: any tenant),
 * coalesced into shared commits on PostgreSQL. While `LANES` of them are in flight, the next ones
 * wait; when a lane frees, the waiting ones commit together in ONE transaction (`writeBatch`) that
 * locks every ledger account the batch touches in id order first, then runs each operation's own
 * statement in arrival order: its own key claim and answer, its own rows and events. A statement
 * that fails rolls the batch back with nothing written; the ones before it commit again together,
 * it runs on its own (and gets its own error), then the ones after it. A failed COMMIT fails them
 * all (its outcome is unknown: running them again could move money twice).
 *
 * Why: on a two-core server every commit is a WAL flush and a transaction's bookkeeping on the
 * database's side, and a bill or a deposit makes two of them per request where a P2P transfer makes
 * one. Shared commits take that cost once per batch.
 *
 * On PGlite (one connection: nothing runs concurrently) every write runs on its own.
 */
export interface CoalescedWrite {
  statement: Statement;
  values: unknown[];
  /** The ledger accounts the statement locks (and may update): locked first, in id order, by a batch. */
  accounts: readonly string[];
}

/** How many writes (alone or batches) run at once per process before the next ones wait and coalesce. */
export const LANES = 2;
/** The most writes one batch commits together. */
export const MAX_BATCH = 32;

/**
 * Every account of a batch, in id order, before anything else is written: the order every single
 * statement locks its accounts in too (and ledger.post), so batches and single writes of this or
 * another process wait for each other but never deadlock on accounts.
 */
export const LOCK_BATCH_ACCOUNTS = statement(
  'money_batch_lock_v1',
  'select id from ledger_accounts where id = any($1::uuid[]) order by id for update',
);

type Rows = Record<string, unknown>[];

interface Pending extends CoalescedWrite {
  resolve(rows: Rows): void;
  reject(error: unknown): void;
}

interface Lanes {
  running: number;
  waiting: Pending[];
}

const lanes = new WeakMap<Database, Lanes>();

function lanesOf(db: Database): Lanes {
  let state = lanes.get(db);
  if (!state) lanes.set(db, (state = { running: 0, waiting: [] }));
  return state;
}

const onPostgres = (db: Database) => (db as unknown as { $client: unknown }).$client instanceof pg.Pool;

/** Runs the write, alone or in a batch with concurrent ones; its rows once committed. */
export function writeCoalesced<Row = Record<string, unknown>>(db: Database, write: CoalescedWrite): Promise<Row[]> {
  if (!onPostgres(db)) return writeAlone(db, write) as Promise<Row[]>;
  const state = lanesOf(db);
  if (state.running >= LANES)
    return new Promise<Rows>((resolve, reject) => state.waiting.push({ ...write, resolve, reject })) as Promise<Row[]>;
  state.running++;
  const written = writeAlone(db, write);
  void written.then(
    () => drain(db),
    () => drain(db),
  );
  return written as Promise<Row[]>;
}

async function writeAlone(db: Database, write: CoalescedWrite): Promise<Rows> {
  const rows = await runStatement(db, write.statement, write.values);
  hintRelays();
  return rows;
}

/** Commits the waiting writes, a batch at a time, until none wait; then frees the lane. Never rejects. */
async function drain(db: Database): Promise<void> {
  const state = lanesOf(db);
  try {
    while (state.waiting.length > 0) {
      const batch = state.waiting.splice(0, MAX_BATCH);
      if (batch.length === 1) await settle(batch[0]!, () => writeAlone(db, batch[0]!));
      else await writeBatch(db, batch);
    }
  } finally {
    state.running--;
  }
}

async function settle(p: Pending, write: () => Promise<Rows>): Promise<void> {
  try {
    p.resolve(await write());
  } catch (error) {
    p.reject(error);
  }
}

async function writeBatch(db: Database, batch: Pending[]): Promise<void> {
  const accounts = [...new Set(batch.flatMap((p) => p.accounts))].sort();
  let results: Rows[];
  let failedAt = -1;
  try {
    results = await inTransaction(db, async (run) => {
      if (accounts.length > 0) await run(LOCK_BATCH_ACCOUNTS, [accounts]);
      const rows: Rows[] = [];
      for (const [i, p] of batch.entries()) {
        failedAt = i;
        rows.push(await run(p.statement, p.values));
      }
      return rows;
    });
  } catch (error) {
    if (error instanceof TransactionFailure && error.phase === 'work' && refusedByServer(error.cause)) {
      if (failedAt < 0) {
        // The lock itself was refused (a lock timeout, a deadlock victim): each runs on its own.
        for (const p of batch) await settle(p, () => writeAlone(db, p));
        return;
      }
      await writeSome(db, batch.slice(0, failedAt));
      await settle(batch[failedAt]!, () => writeAlone(db, batch[failedAt]!));
      await writeSome(db, batch.slice(failedAt + 1));
      return;
    }
    const cause = error instanceof TransactionFailure ? error.cause : error;
    for (const p of batch) p.reject(cause);
    return;
  }
  hintRelays();
  batch.forEach((p, i) => p.resolve(results[i]!));
}

async function writeSome(db: Database, writes: Pending[]): Promise<void> {
  if (writes.length > 1) await writeBatch(db, writes);
  else if (writes.length === 1) await settle(writes[0]!, () => writeAlone(db, writes[0]!));
}

/** Whether the server refused a statement (a database error with its SQLSTATE), not a lost connection. */
function refusedByServer(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && typeof e.severity === 'string';
}
