import { createHash } from 'node:crypto';
import { type AnyColumn, getTableColumns, getTableName } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Database } from '../../db/client.js';
import { type Statement, statement } from '../../db/plain-sql.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Environment } from '../auth/permissions.js';
import { toStorable } from '../idempotency/idempotency.js';
import { type HoldSettlementParams, holdAccountLocksCte, holdSettlementCtes } from '../ledger/ledger-sql.js';
import { holdsOf, ledger, SYSTEM_SHARDS, systemAccount, walletOf } from '../ledger/ledger.js';
import type { HeldKind, HeldRow } from './held-kind.js';
import type { KeyRef } from './key-claim.js';
import { answerCte, linkedTransactionId, outboxCtes, transactionEventData } from './plain-write.js';

/**
 * The settling write of an operation paid from a hold (a bill, a payout), as ONE statement: one
 * round trip, one commit after the provider call. In order:
 *
 * 1. the operation's row is locked, guarded by its status and version, so the row answered (built
 *    by the caller from the row it read) is exactly the row written; the row is the first lock,
 *    as every other settle of these operations takes it;
 * 2. the accounts the hold can move are locked in id order, and only then does the row move
 *    `from` → `to`, as the transaction path does (lock, post, move). An open of the same reference
 *    holds these accounts while its insert waits on the row's updater: moving the row before
 *    locking them deadlocked the two;
 * 3. the hold is captured (the fee to fees, the rest to provider clearing, one shard of each) or
 *    released to the wallet, at most once (guarded by its status), with its posting and entries;
 * 4. the PENDING wallet transaction behind it settles (its state table's move, whose event the
 *    caller gives: wallet/transaction-lifecycle.ts `transactionSettleEvent`), found by its id, which
 *    every hold of a bill or payout names (`transaction_id`), else by the owner's reference (holds
 *    placed before the column was set); see `linkedTransactionId`;
 * 5. both moves go to `operation_transitions`, their events to the outbox, and the
 *    Idempotency-Key gets its answer.
 *
 * When the row moved or changed meanwhile the statement writes nothing and answers false; the
 * caller then settles through its transaction of separate statements, which reads the row anew.
 */
/** The settle statement of one kind of held operation, with the columns its SET list writes, in order. */
export interface HeldStatement {
  statement: Statement;
  /** The row's keys the statement sets after status, version and updated_at: $27 on. */
  columns: readonly { key: string; column: AnyColumn }[];
}

/** Where the hold's pieces find their values in this statement. */
const HOLD: HoldSettlementParams = {
  holdId: '$6',
  capture: '$7',
  fee: '$12',
  at: '$5',
  postingId: '$13',
  holds: '$8',
  wallet: '$9',
  clearing: '$10',
  fees: '$11',
};

/**
 * The statement of a kind, generated from its description (money/held-kind.ts): the table, its
 * status type and the columns a final move sets come from the state table's Drizzle table and the
 * kind's `settleColumns`, the events from its moves, so no part of the change is written twice.
 */
export function settleHeldStatement(kind: HeldKind<HeldRow, unknown>): HeldStatement {
  const table = kind.lifecycle.table as PgTable;
  const all = getTableColumns(table) as Record<string, AnyColumn>;
  const columns = kind.settleColumns.map((key) => ({ key, column: all[key]! }));
  const t = {
    table: getTableName(table),
    kind: kind.lifecycle.kind,
    statusType: all['status']!.getSQLType(),
    set: columns.map(({ column }, i) => `${column.name} = $${27 + i}::${column.getSQLType()}`).join(', '),
  };
  const text = `with target as (
    -- A row lock only: a concurrent open inserting the same reference does not wait on it (its
    -- unique check waits on a row's updater, not its locker), so nothing waits on this row while
    -- it waits for the accounts below.
    select id from ${t.table}
    where id = $1::uuid and status = $4::text::${t.statusType} and version = $2::int
    for update
  ),
  -- The accounts the hold's lines can touch, in id order, as every posting locks them, before the
  -- row is updated: an open of the same reference holds these accounts while its unique check
  -- waits on the row's updater, so updating the row before locking them could deadlock.
  ${holdAccountLocksCte(HOLD, 'exists (select 1 from target)')},
  op as (
    update ${t.table}
    set status = $3::${t.statusType}, version = version + 1, updated_at = $5::timestamptz, ${t.set}
    where id = (select id from target) and (select count(*) from locked) > 0
    returning id
  ),
  -- The capture or release itself (ledger/hold-settlement.ts, the ledger's own rule), once the row moved.
  ${holdSettlementCtes(HOLD, 'exists (select 1 from op)')},
  txn as (
    update wallet_transactions
    set status = $17::wallet_transaction_status, updated_at = $5::timestamptz, version = version + 1
    where id = ${linkedTransactionId(
      '(select transaction_id from held)',
      { userId: '$14', environment: '$15', reference: '$16' },
      'exists (select 1 from op)',
    )}
      and status = 'PENDING' and exists (select 1 from op)
    returning id, reference, type, status, amount, currency, version
  ),
  moves as (
    insert into operation_transitions (kind, operation_id, from_status, to_status, at)
    select '${t.kind}', $1::uuid, $4::text, $3::text, $5::timestamptz from op
    union all
    select 'transaction', x.id, 'PENDING', $17::text, $5::timestamptz from txn x
  ),
  ${answerCte(
    { userId: '$14', environment: '$15', operation: '$20', key: '$21', requestHash: '$22', response: '$23' },
    'exists (select 1 from op)',
  )},
  ${outboxCtes(
    `select 1, $18::text, $14::uuid, $19::jsonb from op
     union all
     select 2, $24::text, $14::uuid, ${transactionEventData('x', '$25')} from txn x`,
    { environment: '$15', at: '$5', trace: '$26' },
  )}
  select (select count(*) from op)::int as moved`;
  // Named by its text: a change to the kind's description is a new prepared statement.
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return { statement: statement(`held_settle_${t.kind}_${digest}`, text), columns };
}

export interface HeldSettle {
  id: string;
  userId: string;
  environment: Environment;
  /** The wallet transaction's reference (the operation's). */
  reference: string;
  version: number;
  from: string;
  to: string;
  /** The one event the operation's move emits, with its data (from the settled row). */
  event: string;
  eventData: unknown;
  /** The settled row, as the key's answer. */
  settled: unknown;
  holdId: string;
  capture: boolean;
  fee: bigint;
  accounts: { holds: string; wallet: string; clearing: string; fees: string };
  at: Date;
  key: KeyRef | null;
  /**
   * The one event of the wallet transaction's move to COMPLETED (capture) or FAILED (release), from
   * its state table (wallet/transaction-lifecycle.ts): given by the caller, so money/ reads no
   * domain's table.
   */
  transactionEvent: string;
}

/** The accounts the settle statement locks (as `holdAccountLocksCte` chooses them): a batch takes them first. */
export const settleAccounts = (w: HeldSettle): string[] =>
  !w.capture
    ? [w.accounts.holds, w.accounts.wallet]
    : w.fee > 0n
      ? [w.accounts.holds, w.accounts.clearing, w.accounts.fees]
      : [w.accounts.holds, w.accounts.clearing];

/** The settle statement's values. */
export function settleHeldValues(st: HeldStatement, w: HeldSettle): unknown[] {
  const settled = w.settled as Record<string, unknown>;
  // Each set column's value as its Drizzle column writes it (a JSON column as its text).
  const extra = st.columns.map(({ key, column }) => {
    const value = settled[key];
    return value === null || value === undefined ? null : column.mapToDriverValue(value);
  });
  const transactionStatus = w.capture ? 'COMPLETED' : 'FAILED';
  const at = w.at.toISOString();
  return [
    w.id,
    w.version,
    w.to,
    w.from,
    at,
    w.holdId,
    w.capture,
    w.accounts.holds,
    w.accounts.wallet,
    w.accounts.clearing,
    w.accounts.fees,
    w.fee.toString(),
    crypto.randomUUID(),
    w.userId,
    w.environment,
    w.reference,
    transactionStatus,
    w.event,
    JSON.stringify(w.eventData),
    w.key?.scope.operation ?? null,
    w.key?.key ?? null,
    w.key?.requestHash ?? null,
    JSON.stringify({ result: toStorable(w.settled) }),
    w.transactionEvent,
    at,
    traceContextJson(),
    ...extra,
  ];
}

/**
 * The accounts a settle may touch: the user's holds and wallet, and one shard each of provider
 * clearing and fees: the user's own shard (by their id), so one wallet's settles committed
 * together (money/group-commit.ts) lock one set of rows and look up two shards, not every one;
 * many users still spread over all of them.
 */
export async function heldAccounts(
  db: Database,
  environment: Environment,
  userId: string,
): Promise<HeldSettle['accounts']> {
  const shard = createHash('sha256').update(userId).digest().readUInt32BE(0) % SYSTEM_SHARDS;
  return {
    holds: await ledger.cachedAccountId(db, holdsOf(environment, userId)),
    wallet: await ledger.cachedAccountId(db, walletOf(environment, userId)),
    clearing: await ledger.cachedAccountId(db, { ...systemAccount(environment, 'provider_clearing'), shard }),
    fees: await ledger.cachedAccountId(db, { ...systemAccount(environment, 'fees'), shard }),
  };
}
