import type { Database } from '../../db/client.js';
import { inTransaction, runStatement, type Statement, statement, TransactionFailure } from '../../db/plain-sql.js';
import type { TransactionRunner } from '../../db/plain-sql.js';
import { refusedByServer } from '../../db/settled-query.js';

/**
 * One write of a money operation that takes turns with others on the same rows (one wallet's
 * accounts): its one statement, and what it must hold before it runs.
 */
export interface GroupedWrite<R> {
  st: Statement;
  values: unknown[];
  /** The ledger accounts its statement locks (in id order, as every posting does). */
  accounts: readonly string[];
  /**
   * Transaction-scoped advisory locks (by text) its statement must run after: a statement whose
   * snapshot must see every earlier holder's commit (a payout's limits window).
   */
  locks?: readonly string[];
  /** What its row means to its caller. */
  read: (raw: Record<string, unknown>) => R;
  /**
   * It finishes an operation already begun (a settle after its provider answered): it goes before
   * the waiting writes that would begin new ones, so a burst's first operations are answered while
   * its last ones are still being opened.
   */
  ahead?: boolean;
}

/**
 * The accounts of every write of a batch, locked in id order before any write runs: the order
 * every single write locks its accounts in too, so batches and single writes of other processes
 * wait for each other but never deadlock.
 */
export const LOCK_ACCOUNTS = statement(
  // Named as when only transfers were batched: what counts batches (monitoring, tests) knows it so.
  'wallet_transfer_batch_lock_v1',
  'select id from ledger_accounts where id = any($1::uuid[]) order by id for update',
);

/** The advisory locks of a batch, taken waiting, in one order (the texts sorted). */
const LOCK_TEXTS = statement(
  'money_group_lock_texts_v1',
  'select count(pg_advisory_xact_lock(hashtext(t))) from (select t from unnest($1::text[]) t order by t) s',
);

/** The most writes one batch commits together. */
export const MAX_BATCH = 64;

const byDatabase = new WeakMap<Database, GroupCommit>();

/**
 * The database's group commit: one for every money operation of this process, so one wallet's
 * writes of any kind (a payout's open, a bill's settle) take turns in one queue, its group named
 * by the wallet's account id.
 */
export function groupCommitOf(db: Database): GroupCommit {
  let group = byDatabase.get(db);
  if (!group) byDatabase.set(db, (group = new GroupCommit(db)));
  return group;
}

interface Pending {
  write: GroupedWrite<unknown>;
  resolve(outcome: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit: writes that take turns on the same rows (one wallet's) in this process. While
 * one of a group's writes (or batches) is in flight, the next ones wait here, holding nothing,
 * then commit together in ONE transaction: their accounts (and advisory locks) taken first, then
 * each write's own statement in arrival order, so each sees what the ones before it wrote (its
 * own balance check, key claim and answer, events). One commit's flush and one turn on the rows
 * serve the whole batch, where each write alone would pay its own (a commit waits for the WAL's
 * flush while it holds its rows' locks, so one wallet's writes alone are one flush apart).
 *
 * A write with no other of its group in flight runs at once, alone. A write whose statement fails
 * (a reference or key a concurrent request took) rolls the batch back with nothing written: the
 * writes before it commit again as a batch, it runs alone (and gets its own error), then the ones
 * after it, so one failing write fails only itself. A failed COMMIT (outcome unknown) fails them
 * all: running them again could move money twice. Other processes batch their own; the row locks
 * keep them exact between processes.
 */
export class GroupCommit {
  /** Per group in flight: its waiting writes, those finishing an operation first. */
  private readonly groups = new Map<string, { ahead: Pending[]; rest: Pending[] }>();

  constructor(
    private readonly db: Database,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  /** Writes `write` in `group`'s turn: alone when none of the group is in flight, else in the next batch. */
  run<R>(group: string, write: GroupedWrite<R>): Promise<R> {
    const waiting = this.groups.get(group);
    if (waiting)
      return new Promise<R>((resolve, reject) =>
        (write.ahead ? waiting.ahead : waiting.rest).push({
          write,
          resolve: resolve as (outcome: unknown) => void,
          reject,
        }),
      );
    this.groups.set(group, { ahead: [], rest: [] });
    const written = this.alone(write);
    const next = () => this.drain(group);
    void written.then(next, next);
    return written;
  }

  /** One write in a transaction of its own (its statement alone when it needs no lock first). */
  private async alone<R>(write: GroupedWrite<R>): Promise<R> {
    if (!write.locks?.length) return write.read((await runStatement(this.db, write.st, write.values))[0]!);
    try {
      return await inTransaction(this.db, async (run) => {
        await run(LOCK_TEXTS, [write.locks]);
        return write.read((await run(write.st, write.values))[0]!);
      });
    } catch (error) {
      throw error instanceof TransactionFailure ? error.cause : error;
    }
  }

  /** Commits the group's waiting writes, a batch at a time, until none wait. Never rejects. */
  private async drain(group: string): Promise<void> {
    for (;;) {
      const waiting = this.groups.get(group)!;
      if (waiting.ahead.length + waiting.rest.length === 0) {
        this.groups.delete(group);
        return;
      }
      const batch = waiting.ahead.splice(0, this.maxBatch);
      await this.writeSome(batch.concat(waiting.rest.splice(0, this.maxBatch - batch.length)));
    }
  }

  private async writeSome(batch: Pending[]): Promise<void> {
    if (batch.length > 1) await this.writeBatch(batch);
    else if (batch.length === 1) await settle(batch[0]!, () => this.alone(batch[0]!.write));
  }

  /** One transaction for a batch: see the class. */
  private async writeBatch(batch: Pending[]): Promise<void> {
    const accounts = [...new Set(batch.flatMap((p) => p.write.accounts))];
    const locks = [...new Set(batch.flatMap((p) => p.write.locks ?? []))];
    let outcomes: unknown[];
    let failedAt = -1;
    try {
      outcomes = await inTransaction(this.db, async (run: TransactionRunner) => {
        if (locks.length > 0) await run(LOCK_TEXTS, [locks]);
        await run(LOCK_ACCOUNTS, [accounts]);
        const answered: unknown[] = [];
        for (const [i, p] of batch.entries()) {
          failedAt = i;
          answered.push(p.write.read((await run(p.write.st, p.write.values))[0]!));
        }
        return answered;
      });
    } catch (error) {
      if (error instanceof TransactionFailure && error.phase === 'work' && refusedByServer(error.cause)) {
        if (failedAt < 0) {
          // The locks themselves were refused (a lock timeout, a deadlock victim): each runs alone.
          for (const p of batch) await settle(p, () => this.alone(p.write));
          return;
        }
        await this.writeSome(batch.slice(0, failedAt));
        await settle(batch[failedAt]!, () => this.alone(batch[failedAt]!.write));
        await this.writeSome(batch.slice(failedAt + 1));
        return;
      }
      const cause = error instanceof TransactionFailure ? error.cause : error;
      for (const p of batch) p.reject(cause);
      return;
    }
    batch.forEach((p, i) => p.resolve(outcomes[i]));
  }
}

async function settle(p: Pending, write: () => Promise<unknown>): Promise<void> {
  try {
    p.resolve(await write());
  } catch (error) {
    p.reject(error);
  }
}
