import type { Database } from '../../db/client.js';
import { billRecords } from '../../db/bills-schema.js';
import { runStatement, statement } from '../../db/plain-sql.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import type { StatementOpened } from '../money/held-operation.js';
import { type KeyRef, keyLockId } from '../money/key-claim.js';
import { holdPlacementCtes } from '../ledger/ledger-sql.js';
import {
  claimColumns,
  claimCtes,
  jobDueSql,
  jobLane,
  keyRowOf,
  outboxCtes,
  rowMapper,
  statementForClock,
} from '../money/plain-write.js';
import { nairaNumber } from '../wallet/naira.js';
import type { BillRecordRow } from './bill-record.js';

/**
 * A bill payment's open as one statement (one round trip, one commit), in plain SQL
 * built once: no query building per request.
 *
 * OPEN (before the provider call): the key claim (advisory lock on its hash, its row read), the
 * wallet and holds rows locked in id order (the contended rows first), the guarded debit into the
 * holds account, the hold (naming the wallet transaction it pays for) with its posting and
 * entries, the PENDING record, the PENDING wallet transaction with `transaction.created`, the
 * status-poll job, and the key left `running` with the record attached — every write depends on the debit, so
 * a busy key, a key with an answer or too little money writes nothing.
 *
 * The settle after the provider call is the held operation's (money/held-operation.ts), its one
 * statement generated from BILL_HELD (bill-lifecycle.ts).
 */

/**
 * The unique index that holds one bill per owner and reference. With the wallet transaction's
 * (`REFERENCE_CONSTRAINT`), the only unique indexes a bill's open statement can meet that mean
 * "this reference is taken"; any other violation is a fault, not the caller's conflict.
 */
export const BILL_REFERENCE_CONSTRAINT = 'bill_records_owner_reference_key';

/** OPEN's text, its status poll clocked or not (money/plain-write.ts jobDueSql). */
const openText = (clocked: boolean) =>
  `with ${claimCtes({ lockId: '$1', userId: '$2', environment: '$3', operation: '$4', key: '$5', now: '$15' })},
  ${holdPlacementCtes({
    holdId: '$10',
    environment: '$3',
    userId: '$2',
    wallet: '$7',
    holds: '$8',
    amount: '$9',
    reference: '$14',
    posting: '$11',
    transactionId: '$13',
    expiresAt: 'null',
  })},
  record as (
    insert into bill_records (id, user_id, environment, reference, biller_code, item_code, customer, amount, fee,
      type, biller_name, customer_name, validity_period, provider, hold_id, created_at, updated_at)
    select $12::uuid, $2::uuid, $3::environment, $14::text, $16::text, $17::text, $18::text, $19::bigint, $20::bigint,
      $21::bill_type, $22::text, $23::text, $24::text, $25::text, $10::uuid, $15::timestamptz, $15::timestamptz
    where exists (select 1 from moved)
    returning *
  ),
  txn as (
    insert into wallet_transactions
      (id, user_id, environment, type, status, amount, fee, reference, description, counterparty, created_at, updated_at)
    select $13::uuid, $2::uuid, $3::environment, 'BILL'::wallet_transaction_type, 'PENDING'::wallet_transaction_status,
      $19::bigint, $20::bigint, $14::text, $26::text, $27::jsonb, $15::timestamptz, $15::timestamptz
    where exists (select 1 from moved)
  ),
  answer as (
    insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, resource_id, locked_until)
    select $2::uuid, $3::environment, $4::text, $5::text, $6::text, 'running'::idempotency_status, $12::text, $28::timestamptz
    where $5::text is not null and exists (select 1 from moved)
  ),
  poll as (
    insert into jobs (kind, lane, tenant, payload, run_at, test_clock_id)
    select ${jobLane('bill.status-poll')}, $2::text, jsonb_build_object('recordId', $12::text) || $31::jsonb,
      ${jobDueSql(clocked, '$29', '$32', '$33')}
    where exists (select 1 from moved)
  ),
  ${outboxCtes(`select 1, 'transaction.created', $2::uuid, $30::jsonb where exists (select 1 from moved)`, {
    environment: '$3',
    at: '$15',
    trace: '$31',
  })}
  select ${claimColumns}, (select count(*) from moved)::int as moved, r.*
  from (select 1) one left join prior p on true left join record r on true`;

const OPEN = {
  plain: statement('bill_open_v5', openText(false)),
  clocked: statement('bill_open_clocked_v5', openText(true)),
};

const recordOf = rowMapper<BillRecordRow>(billRecords);

export interface BillOpen {
  environment: Environment;
  userId: string;
  walletAccountId: string;
  holdsAccountId: string;
  reference: string;
  payment: {
    type: BillRecordRow['type'];
    billerCode: string;
    billerName: string;
    itemCode: string;
    customer: string;
    customerName: string | null;
    validityPeriod: string | null;
    amount: bigint;
    fee: bigint;
  };
  provider: string;
  at: Date;
  /** Read on `clock`, the account's: the statement writes it in wall time by the clock's offset as its row stands. */
  pollAt: Date;
  leaseUntil: Date;
  key: KeyRef | null;
  clock?: Clock;
}

export type BillOpened = StatementOpened<BillRecordRow>;

export async function openBill(db: Database, w: BillOpen): Promise<BillOpened> {
  const { payment } = w;
  const holdId = crypto.randomUUID();
  const recordId = crypto.randomUUID();
  const transactionId = crypto.randomUUID();
  const at = w.at.toISOString();
  const counterparty = { billerCode: payment.billerCode, billerName: payment.billerName, customer: payment.customer };
  const created = {
    id: transactionId,
    reference: w.reference,
    type: 'BILL',
    status: 'PENDING',
    amount: nairaNumber(payment.amount),
    currency: 'NGN',
    version: 1,
    updatedAt: at,
  };
  const { st, params } = statementForClock(OPEN, w.clock);
  const [row] = await runStatement(db, st, [
    w.key ? keyLockId(w.key.scope, w.key.key) : null,
    w.userId,
    w.environment,
    w.key?.scope.operation ?? null,
    w.key?.key ?? null,
    w.key?.requestHash ?? null,
    w.walletAccountId,
    w.holdsAccountId,
    (payment.amount + payment.fee).toString(),
    holdId,
    crypto.randomUUID(),
    recordId,
    transactionId,
    w.reference,
    at,
    payment.billerCode,
    payment.itemCode,
    payment.customer,
    payment.amount.toString(),
    payment.fee.toString(),
    payment.type,
    payment.billerName,
    payment.customerName,
    payment.validityPeriod,
    w.provider,
    `${payment.billerName} for ${payment.customer}`,
    JSON.stringify(counterparty),
    w.leaseUntil.toISOString(),
    w.pollAt.toISOString(),
    JSON.stringify(created),
    traceContextJson(),
    ...params,
  ]);
  if ((row!['moved'] as number) > 0) return { opened: recordOf(row!) };
  const claim = keyRowOf(row!);
  if (!claim.locked || claim.status !== null) return { claim };
  return { insufficient: true };
}
