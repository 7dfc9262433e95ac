import type { Database } from '../../db/client.js';
import { walletTransactions } from '../../db/wallet-schema.js';
import { heldOpened, heldOpenRun, heldOpenStatement, rowJson } from '../money/held-open.js';
import type { StatementOpened } from '../money/keyed-open.js';
import type { WalletTransactionRow } from './transaction-store.js';
import { pendingTransactionEvent } from './wallet-events.js';
import { runStatement, statement } from '../../db/plain-sql.js';
import type { Clock } from '../clock.js';
import { deposits } from '../../db/wallet-schema.js';
import { traceContextJson } from '../../observability/job-observation.js';
import { toStorable } from '../idempotency/idempotency.js';
import { DEPOSIT, DEPOSIT_RECONCILE_JOB, depositEventData } from './deposit-lifecycle.js';
import type { KeyRef } from '../money/key-claim.js';
import {
  answerCte,
  jobDueSql,
  jobLane,
  keyRowOf,
  linkedTransactionId,
  outboxCtes,
  rowMapper,
  statementForClock,
  transactionEventData,
} from '../money/plain-write.js';
import type { DepositRow } from './deposit-store.js';

/**
 * A deposit's two writes around its provider call, as one statement each (one round trip, one
 * commit, no query building per request).
 *
 * OPEN: the keyed operation's first commit, generated (money/held-open.ts) from the deposit's
 * shape: its table, the wallet transaction's, its reconciliation job, and no hold. The rows are
 * the ones the steps write (deposit-rows.ts). The deposit is inserted before its transaction, as
 * every other path writes them, so two writers of one reference wait for each other in one order
 * and never deadlock; a reference another operation holds meets a unique index and is refused by
 * name (the open's `referenceConstraints`). (A read by reference before the inserts was planned,
 * without statistics, over the owner's amount index, reading all of the owner's transactions on
 * every deposit.)
 *
 * STARTED (the provider answered "pending": an account to pay into, a link, a PIN to send): the
 * deposit moved initiated → pending (guarded by its version, so the row answered is the row
 * written) with the provider's details, the move kept in `operation_transitions`, `deposit.pending`,
 * the wallet transaction's new version with `transaction.updated` (its stage) — reached by the id
 * the deposit keeps (`transaction_id`), so the plan does not rest on statistics —, the expiry and
 * simulated-arrival jobs, and the key's answer.
 */
const OPEN = heldOpenStatement({
  kind: 'deposit',
  record: deposits,
  transaction: walletTransactions,
  job: DEPOSIT_RECONCILE_JOB,
  hold: false,
});

/** The unique index that holds one deposit per owner and reference: met, the reference is taken. */
export const DEPOSIT_REFERENCE_CONSTRAINT = 'deposits_owner_reference_key';

/** STARTED's text, its jobs clocked or not. */
const startedText = (clocked: boolean) =>
  `with dep as (
    update deposits
    set status = 'pending', version = version + 1, updated_at = $3::timestamptz, provider_ref = $4::text,
      account_number = $5::text, bank_name = $6::text, account_name = $7::text, expires_at = $8::timestamptz,
      narration = $9::text, next_action = $10::jsonb
    where id = $1::uuid and status = 'initiated' and version = $2::int
    returning id, transaction_id
  ),
  moves as (
    insert into operation_transitions (kind, operation_id, from_status, to_status, at)
    select 'deposit', $1::uuid, 'initiated', 'pending', $3::timestamptz from dep
  ),
  txn as (
    update wallet_transactions set updated_at = $3::timestamptz, version = version + 1
    where id = ${linkedTransactionId(
      '(select transaction_id from dep)',
      { userId: '$11', environment: '$12', reference: '$13' },
      'exists (select 1 from dep)',
    )}
      and status = 'PENDING'
    returning id, reference, type, status, amount, currency, version
  ),
  later as (
    insert into jobs (kind, lane, tenant, payload, run_at, test_clock_id)
    select j.kind, j.lane, $11::text, jsonb_build_object('depositId', $1::text) || $22::jsonb,
      ${jobDueSql(clocked, 'j.run_at', '$25', '$26')}
    from (values (${jobLane('deposit.expire')}, $20::timestamptz), (${jobLane('deposit.sandbox-arrival')}, $21::timestamptz))
      as j(kind, lane, run_at)
    where j.run_at is not null and exists (select 1 from dep)
  ),
  ${answerCte(
    { userId: '$11', environment: '$12', operation: '$16', key: '$17', requestHash: '$18', response: '$19' },
    'exists (select 1 from dep)',
  )},
  ${outboxCtes(
    `select 1, $24::text, $11::uuid, $15::jsonb from dep
     union all
     select 2, 'transaction.updated', $11::uuid, ${transactionEventData('t', '$23', '$14')} from txn t`,
    { environment: '$12', at: '$3', trace: '$22' },
  )}
  select (select count(*) from dep)::int as moved`;

const STARTED = {
  plain: statement('deposit_started_v5', startedText(false)),
  clocked: statement('deposit_started_clocked_v5', startedText(true)),
};

const depositOf = rowMapper<DepositRow>(deposits);

export interface DepositOpen {
  /** The `initiated` deposit and its PENDING wallet transaction as they are to be written (deposit-rows.ts). */
  deposit: DepositRow;
  transaction: WalletTransactionRow;
  /** Read on `clock`, the account's; null: no reconciliation job. */
  reconcileAt: Date | null;
  leaseUntil: Date;
  clock?: Clock | undefined;
  key: KeyRef | null;
}

export type DepositOpened = StatementOpened<DepositRow>;

/** Runs the deposit's open: see the file. Nothing is written unless the key is claimed. */
export async function openDeposit(db: Database, w: DepositOpen): Promise<DepositOpened> {
  const { deposit, transaction } = w;
  const { st, values } = heldOpenRun(OPEN, {
    owner: deposit,
    reference: deposit.reference,
    key: w.key,
    leaseUntil: w.leaseUntil,
    at: deposit.createdAt,
    record: { id: deposit.id, json: rowJson(deposits, deposit) },
    transaction: { id: transaction.id, json: rowJson(walletTransactions, transaction) },
    job: { payload: { depositId: deposit.id }, runAt: w.reconcileAt, clock: w.clock },
    // deposit.initiated with transaction.created, as the steps write them.
    events: [{ type: 'deposit.initiated', data: depositEventData(deposit) }, pendingTransactionEvent(transaction)],
  });
  const [raw] = await runStatement(db, st, values);
  // With no hold, nothing but the key's claim keeps the open from writing.
  return heldOpened(raw!, depositOf) ?? { claim: keyRowOf(raw!) };
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export interface DepositStarted {
  deposit: DepositRow;
  /** The columns the provider's answer sets (provider reference, pay-in account, expiry, next action). */
  changes: Pick<
    DepositRow,
    'providerRef' | 'accountNumber' | 'bankName' | 'accountName' | 'expiresAt' | 'narration' | 'nextAction'
  >;
  stage: string;
  at: Date;
  /** Both read on `clock`, the account's. */
  expireAt: Date | null;
  arrivalAt: Date | null;
  key: KeyRef | null;
  clock?: Clock;
}

/** Whether STARTED writes this move (initiated → pending, with the one event the table lists). */
export const startsInOneStatement = (deposit: DepositRow) =>
  deposit.status === 'initiated' && DEPOSIT.moves.initiated.pending?.length === 1;

/** The deposit moved to pending in one statement; undefined (nothing written) when it moved meanwhile. */
export async function startDeposit(db: Database, w: DepositStarted): Promise<DepositRow | undefined> {
  const { deposit, changes } = w;
  const moved: DepositRow = {
    ...deposit,
    ...changes,
    status: 'pending',
    version: deposit.version + 1,
    updatedAt: w.at,
  };
  const [event] = DEPOSIT.moves.initiated.pending!;
  const at = w.at.toISOString();
  const { st, params } = statementForClock(STARTED, w.clock);
  const [row] = await runStatement(db, st, [
    deposit.id,
    deposit.version,
    at,
    changes.providerRef,
    changes.accountNumber,
    changes.bankName,
    changes.accountName,
    changes.expiresAt?.toISOString() ?? null,
    changes.narration,
    json(changes.nextAction),
    deposit.userId,
    deposit.environment,
    deposit.reference,
    w.stage,
    JSON.stringify(depositEventData(moved)),
    w.key?.scope.operation ?? null,
    w.key?.key ?? null,
    w.key?.requestHash ?? null,
    JSON.stringify({ result: toStorable(moved) }),
    w.expireAt?.toISOString() ?? null,
    w.arrivalAt?.toISOString() ?? null,
    traceContextJson(),
    at,
    event,
    ...params,
  ]);
  return (row!['moved'] as number) > 0 ? moved : undefined;
}
