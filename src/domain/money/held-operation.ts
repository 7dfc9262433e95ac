import { eq } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { ClockFor, ClockOwner } from '../clock.js';
import { notFound } from '../errors.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { answer, answerAsItStands, type Opened } from '../lifecycle/keyed.js';
import { type KeyedOpen, openKeyedOperation } from './keyed-open.js';
import { transition } from '../lifecycle/transition.js';
import type { HeldChange, HeldKind, HeldRow, HeldWallet } from './held-kind.js';
import { captureHold, placeHold, releaseHold } from './holds.js';
import type { KeyRef } from './key-claim.js';
import { groupCommitOf } from './group-commit.js';
import type { Bulkhead } from '../upstream/bulkhead.js';
import {
  heldAccounts,
  type HeldSettle,
  type HeldStatement,
  settleAccounts,
  settleHeldStatement,
  settleHeldValues,
} from './settle-held.js';

export type { Opened } from '../lifecycle/keyed.js';
export type { KeyedOpen, StatementOpened } from './keyed-open.js';

/**
 * An operation paid from a hold (a bill, a payout): two commits with the provider called between
 * them, outside any transaction. This module owns everything but the operation's own record and
 * its provider:
 *
 * - the first commit (`open`): the Idempotency-Key claimed in it (replay, 422, 409 for a twin in
 *   flight, the retry once when a twin's answer committed after the statement's snapshot), a
 *   reference another operation holds refused by name (409), the hold (`hold`, never expiring: the
 *   money stays held from the moment the provider may hear of it until the operation settles), and
 *   the key left `running` with the record for the lease (IDEMPOTENCY_LEASE_MS);
 * - the second commit (`settle`): the kind's `change` for the provider's outcome, written as ONE
 *   statement generated from that description where it can be (money/settle-held.ts), else as a
 *   transaction of steps (the row locked, the hold captured or released, the state table's
 *   `transition()` with its events, the wallet transaction's move), with the key's answer;
 * - the clock, per account (`now`).
 */
export class HeldOperation<Row extends HeldRow, Outcome> {
  constructor(
    private readonly db: Database,
    private readonly idempotency: Idempotency,
    private readonly clockFor: ClockFor,
    readonly kind: HeldKind<Row, Outcome>,
    private readonly wallet: HeldWallet,
  ) {}

  /** The time of the account the operation acts for. */
  now(account: ClockOwner): Date {
    return this.clockFor(account).now();
  }

  /**
   * Holds `amount` from the owner's wallet for the operation, in its first transaction: the wallet's
   * row lock (the contended one) is taken here. The hold names the wallet transaction it pays for,
   * so the settle reaches it by id. No expiry: once the provider may have been called, only the
   * provider's outcome (through `settle`) gives the money back.
   */
  hold(
    tx: Executor,
    owner: { userId: string; environment: Environment },
    amount: bigint,
    reference: string,
    transactionId: string,
  ): Promise<string> {
    return placeHold(tx, { ...owner, amount, reference, transactionId });
  }

  /** The first commit: see the class. */
  open(o: KeyedOpen<Row>): Promise<Opened<Row>> {
    return openKeyedOperation(
      this.db,
      this.idempotency,
      this.now(o.owner),
      o,
      async (tx, id) => (await this.read(tx, id))!,
    );
  }

  /**
   * The whole operation, in order: a place in the provider's bulkhead (`bulkhead`, when given), the
   * first commit (`open`), the provider call between the two commits (`send`, outside any
   * transaction: the hold is in place, no connection or lock is held), and the second commit with
   * its outcome (`settle`). A replay or refusal answers at once; a key a dead request left running
   * is finished by `resume` (which asks the provider before sending).
   *
   * The place is taken before anything is written, so a call refused for want of one (503 BUSY with
   * Retry-After) has claimed no key, held no money and recorded nothing; a replay takes one too (it
   * is not known to be one until the key is read, in the first commit). It is given back as soon as
   * the provider has answered (before the settle), or before `resume`, which takes its own.
   */
  async run(
    o: KeyedOpen<Row> & {
      send: (row: Row) => Promise<Outcome>;
      resume: (row: Row, key: KeyRef) => Promise<Row>;
      /** The provider's bulkhead (upstream/bulkhead.ts): a place in it is held from before the first commit to the provider's answer. */
      bulkhead?: Pick<Bulkhead, 'enter'>;
    },
  ): Promise<Row> {
    const leave = o.bulkhead ? await o.bulkhead.enter() : () => undefined;
    try {
      const opened = await this.open(o);
      if ('done' in opened) return opened.done;
      if ('resumed' in opened) {
        leave();
        return await o.resume(opened.resumed, opened.ref);
      }
      let outcome: Outcome;
      try {
        outcome = await o.send(opened.opened);
      } finally {
        leave();
      }
      return await this.settle(opened.opened, outcome, opened.ref);
    } finally {
      leave();
    }
  }

  /**
   * The provider's outcome, applied once with the key's answer: one statement when the change is
   * a final move it can write and the row is still the one given, else a transaction of steps that
   * reads the row anew.
   */
  async settle(row: Row, outcome: Outcome, key: KeyRef | null = null): Promise<Row> {
    const settled = await this.settleInOneStatement(row, outcome, key);
    return settled ?? this.settleBySteps(row.id, outcome, key);
  }

  /**
   * The generated statement's settle: the settled row, or undefined when it cannot write this
   * change or the row moved meanwhile (then nothing was written).
   */
  async settleInOneStatement(row: Row, outcome: Outcome, key: KeyRef | null = null): Promise<Row | undefined> {
    return settleInOneStatement(this.db, this.kind, this.wallet, row, outcome, {
      at: this.now(row),
      accounts: await heldAccounts(this.db, row.environment, row.userId),
      key,
    });
  }

  /** The same change as a transaction of steps, on the row as it stands under its lock; the key answered in it. */
  settleBySteps(id: string, outcome: Outcome, key: KeyRef | null = null): Promise<Row> {
    return this.db.transaction(async (tx) => {
      const row = await this.apply(tx, id, outcome);
      await answer(tx, key, row);
      return row;
    });
  }

  /** A resumed operation that needs nothing more: the key answered with it as it stands. */
  answerAsItStands(key: KeyRef | null, row: Row): Promise<Row> {
    return answerAsItStands(this.db, key, row);
  }

  /** The row by id, or 404 in the kind's name. */
  async byId(id: string): Promise<Row> {
    const row = await this.read(this.db, id);
    if (!row) throw notFound(this.kind.name);
    return row;
  }

  private async apply(tx: Executor, id: string, outcome: Outcome): Promise<Row> {
    // The row first, then its hold and accounts: the order every settle of a held operation locks in.
    const current = await this.read(tx, id, true);
    if (!current) throw notFound(this.kind.name);
    const change: HeldChange<Row> = this.kind.change(current, outcome);
    if ('none' in change) return current;
    const now = this.now(current);
    const { lifecycle } = this.kind;
    if ('note' in change) {
      const [row] = (await tx
        .update(lifecycle.table)
        .set({ ...change.note, updatedAt: now })
        .where(eq(lifecycle.table.id, id))
        .returning()) as Row[];
      return row!;
    }
    // The hold first: its guarded update decides which of two racing settlements settles.
    if ('settle' in change && current.holdId) {
      if (change.settle === 'capture') await captureHold(tx, current.holdId, current.fee, now);
      else await releaseHold(tx, current.holdId, now);
    }
    const row = await transition(tx, lifecycle, id, current.status as Row['status'], change.to, now, change.set);
    if (!row) return (await this.read(tx, id))!;
    if ('keep' in change) await this.wallet.progress(tx, row, row.reference, change.stage, now);
    // An operation without a hold (a scheduled bill refused before it) never opened a wallet transaction.
    else if (row.holdId)
      await this.wallet.settle(
        tx,
        row.holdId,
        row,
        row.reference,
        change.settle === 'capture' ? 'COMPLETED' : 'FAILED',
        now,
      );
    return row;
  }

  private async read(db: Executor, id: string, lock = false): Promise<Row | undefined> {
    const { table } = this.kind.lifecycle;
    const query = db.select().from(table).where(eq(table.id, id));
    const [row] = (await (lock ? query.for('update') : query)) as Row[];
    return row;
  }
}

const statements = new WeakMap<object, HeldStatement>();

/** A kind's settle statement, generated once from its description. */
function statementOf(kind: HeldKind<HeldRow, unknown>): HeldStatement {
  let st = statements.get(kind);
  if (!st) statements.set(kind, (st = settleHeldStatement(kind)));
  return st;
}

/**
 * A held operation's change as ONE statement generated from its kind (money/settle-held.ts): the
 * settled row, or undefined when the statement cannot write this change (not a final move with
 * one event each, or no hold) or the row is no longer the one given; then nothing was written.
 * `accounts` are the system shards the capture or release may touch (heldAccounts).
 */
export async function settleInOneStatement<Row extends HeldRow, Outcome>(
  db: Database,
  kind: HeldKind<Row, Outcome>,
  wallet: HeldWallet,
  row: Row,
  outcome: Outcome,
  o: { at: Date; accounts: HeldSettle['accounts']; key: KeyRef | null },
): Promise<Row | undefined> {
  const change = kind.change(row, outcome);
  if (!('settle' in change) || row.holdId === null) return undefined;
  const events = kind.lifecycle.moves[row.status as Row['status']]?.[change.to];
  const transactionEvent = wallet.settleEvent(change.settle === 'capture' ? 'COMPLETED' : 'FAILED');
  if (events?.length !== 1 || transactionEvent === undefined) return undefined;
  const settled = { ...row, ...change.set, status: change.to, version: row.version + 1, updatedAt: o.at } as Row;
  const st = statementOf(kind as unknown as HeldKind<HeldRow, unknown>);
  const w: HeldSettle = {
    id: row.id,
    userId: row.userId,
    environment: row.environment,
    reference: row.reference,
    version: row.version,
    from: row.status,
    to: change.to,
    event: events[0]!,
    eventData: kind.lifecycle.data?.(settled),
    settled,
    holdId: row.holdId,
    capture: change.settle === 'capture',
    transactionEvent,
    fee: row.fee,
    accounts: o.accounts,
    at: o.at,
    key: o.key,
  };
  // In the wallet's group commit (money/group-commit.ts): one wallet's settles and opens arriving
  // together commit together, one flush and one turn on its accounts for all of them.
  const moved = await groupCommitOf(db).run(o.accounts.wallet, {
    st: st.statement,
    values: settleHeldValues(st, w),
    accounts: settleAccounts(w),
    read: (raw) => (raw['moved'] as number) > 0,
    ahead: true,
  });
  return moved ? settled : undefined;
}
