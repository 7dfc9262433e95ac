import type { Database } from '../../db/client.js';
import { runStatement, statement } from '../../db/plain-sql.js';
import type { Clock } from '../clock.js';
import { deposits } from '../../db/wallet-schema.js';
import { traceContextJson } from '../../observability/job-observation.js';
import { toStorable } from '../idempotency/idempotency.js';
import { DEPOSIT, depositEventData } from './deposit-lifecycle.js';
import { type KeyRef, type KeyRow, keyLockId } from '../money/key-claim.js';
import {
  answerCte,
  claimColumns,
  claimCtes,
  jobDueSql,
  jobLane,
  keyRowOf,
  linkedTransactionId,
  outboxCtes,
  rowMapper,
  runningKeyInsert,
  statementForClock,
  transactionEventData,
} from '../money/plain-write.js';
import type { DepositRow } from './deposit-store.js';
import { nairaNumber } from './naira.js';

/**
 * A deposit's two writes around its provider call, as one plain-SQL statement each (one round
 * trip, one commit, no query building per request).
 *
 * OPEN: the key claim (advisory lock on its hash, its row read), the `initiated` deposit inserted
 * first with `on conflict do nothing` on the owner's unique reference, then its PENDING wallet
 * transaction, so the unique indexes answer whether the reference is free: a deposit holding it
 * writes nothing (its transaction is then read, to name it), and any other transaction holding it
 * fails the statement with the transaction's unique violation. (A read by reference before the
 * inserts was planned, without statistics, over the owner's amount index, reading all of the
 * owner's transactions on every deposit.) Deposit before transaction, as every other path writes
 * them, so two writers of one reference wait for each other in one order and never deadlock.
 * Then `deposit.initiated` and `transaction.created`, the
 * reconciliation job when the provider wants its charges polled, and the key left `running` with
 * the deposit attached. A busy key, a key with an answer or a taken reference writes nothing.
 *
 * STARTED (the provider answered "pending": an account to pay into, a link, a PIN to send): the
 * deposit moved initiated → pending (guarded by its version, so the row answered is the row
 * written) with the provider's details, the move kept in `operation_transitions`, `deposit.pending`,
 * the wallet transaction's new version with `transaction.updated` (its stage) — reached by the id
 * the deposit keeps (`transaction_id`), so the plan does not rest on statistics —, the expiry and
 * simulated-arrival jobs, and the key's answer.
 */

/** OPEN's text, its reconciliation job clocked or not (money/plain-write.ts jobDueSql). */
const openText = (clocked: boolean) =>
  `with ${claimCtes({ lockId: '$1', userId: '$2', environment: '$3', operation: '$4', key: '$5', now: '$18' })},
  dep as (
    insert into deposits (id, user_id, environment, reference, method, payment_method_id, amount, currency, status,
      provider, redirect_url, narration, meta, customer, transaction_id, created_at, updated_at)
    select $7::uuid, $2::uuid, $3::environment, $8::text, $9::text, $10::uuid, $11::bigint, $12::text,
      'initiated'::deposit_status, $13::text, $14::text, $15::text, $16::jsonb, $17::jsonb, $19::uuid,
      $18::timestamptz, $18::timestamptz
    from go
    on conflict (user_id, environment, reference) do nothing
    returning *
  ),
  fresh as (select 1 as one from dep),
  taken as (
    select id from wallet_transactions
    where user_id = $2::uuid and environment = $3::environment and reference = $8::text
      and exists (select 1 from go) and not exists (select 1 from dep)
  ),
  txn as (
    insert into wallet_transactions
      (id, user_id, environment, type, status, amount, reference, description, counterparty, created_at, updated_at)
    select $19::uuid, $2::uuid, $3::environment, 'DEPOSIT'::wallet_transaction_type, 'PENDING'::wallet_transaction_status,
      $11::bigint, $8::text, $15::text, $20::jsonb, $18::timestamptz, $18::timestamptz
    from fresh
  ),
  answer as (
    ${runningKeyInsert(
      {
        userId: '$2',
        environment: '$3',
        operation: '$4',
        key: '$5',
        requestHash: '$6',
        resourceId: '$7',
        leaseUntil: '$24',
      },
      'exists (select 1 from fresh)',
    )}
  ),
  reconcile as (
    insert into jobs (kind, lane, tenant, payload, run_at, test_clock_id)
    select ${jobLane('deposit.reconcile')}, $2::text, jsonb_build_object('depositId', $7::text) || $25::jsonb,
      ${jobDueSql(clocked, '$23', '$26', '$27')}
    from fresh where $23::timestamptz is not null
  ),
  ${outboxCtes(
    `select 1, 'deposit.initiated', $2::uuid, $21::jsonb from fresh
     union all
     select 2, 'transaction.created', $2::uuid, $22::jsonb from fresh`,
    { environment: '$3', at: '$18', trace: '$25' },
  )}
  select ${claimColumns}, (select count(*) from go)::int as went, (select id from taken limit 1) as taken_id,
    (select count(*) from dep)::int as written, d.*
  from (select 1) one left join prior p on true left join dep d on true`;

const OPEN = {
  plain: statement('deposit_open_v6', openText(false)),
  clocked: statement('deposit_open_clocked_v6', openText(true)),
};

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
  row: Pick<
    DepositRow,
    | 'id'
    | 'userId'
    | 'environment'
    | 'reference'
    | 'method'
    | 'paymentMethodId'
    | 'amount'
    | 'currency'
    | 'provider'
    | 'redirectUrl'
    | 'narration'
    | 'meta'
    | 'customer'
  >;
  at: Date;
  /** Read on `clock`, the account's. */
  reconcileAt: Date | null;
  leaseUntil: Date;
  clock?: Clock;
  key: KeyRef | null;
}

export type DepositOpened = { opened: DepositRow } | { claim: KeyRow } | { taken: string | null };

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export async function openDeposit(db: Database, w: DepositOpen): Promise<DepositOpened> {
  const { row: d, key } = w;
  const at = w.at.toISOString();
  const transactionId = crypto.randomUUID();
  const initiated = depositEventData({
    ...d,
    status: 'initiated',
    accountNumber: null,
    bankName: null,
    version: 1,
    updatedAt: w.at,
  } as DepositRow);
  const created = {
    id: transactionId,
    reference: d.reference,
    type: 'DEPOSIT',
    status: 'PENDING',
    amount: nairaNumber(d.amount),
    currency: 'NGN',
    version: 1,
    updatedAt: at,
  };
  const { st, params } = statementForClock(OPEN, w.clock);
  const [row] = await runStatement(db, st, [
    key ? keyLockId(key.scope, key.key) : null,
    d.userId,
    d.environment,
    key?.scope.operation ?? null,
    key?.key ?? null,
    key?.requestHash ?? null,
    d.id,
    d.reference,
    d.method,
    d.paymentMethodId,
    d.amount.toString(),
    d.currency,
    d.provider,
    d.redirectUrl,
    d.narration,
    json(d.meta),
    json(d.customer),
    at,
    transactionId,
    JSON.stringify({ method: d.method }),
    JSON.stringify(initiated),
    JSON.stringify(created),
    w.reconcileAt?.toISOString() ?? null,
    w.leaseUntil.toISOString(),
    traceContextJson(),
    ...params,
  ]);
  if ((row!['written'] as number) > 0) return { opened: depositOf(row!) };
  // The key was free but a deposit held the reference: its transaction, or null when it committed
  // after this statement's snapshot (the insert waited for it; the read cannot see it).
  if ((row!['went'] as number) > 0) return { taken: row!['taken_id'] ? String(row!['taken_id']) : null };
  return { claim: keyRowOf(row!) };
}

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
