import type { Database } from '../../db/client.js';
import { runStatement, statement } from '../../db/plain-sql.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Environment } from '../auth/permissions.js';
import { laneOf } from '../jobs/lanes.js';
import { type KeyRow, keyLockId, type Stored } from '../money/key-claim.js';
import { ALL_KINDS } from '../webhooks/event-kinds.js';
import { DELIVERY_JOB } from '../webhooks/webhook.js';
import { nairaNumber } from './naira.js';
import type { WalletTransactionRow } from './transaction-store.js';

export const TRANSFER_OPERATION = 'wallet.transfer';
const EVENT_TYPE = 'transaction.completed';

/**
 * A P2P transfer as ONE statement, so one round trip and one commit on the request path: the
 * idempotency claim (a transaction-scoped advisory lock on the key's hash, and the key's row), both
 * wallet rows locked in id order (no deadlock between A→B and B→A), the guarded debit and the
 * credit, the posting and its two entries, both wallet transactions, the key's answer, and both
 * `transaction.completed` events with their webhook deliveries and delivery jobs. Every write
 * depends on the debit having happened (`moved`), so a busy key, a replay or too little money
 * writes nothing. The caller knows which from the returned row.
 *
 * A statement's writes share one snapshot and cannot see each other's rows, so both accounts must
 * exist beforehand (`ledger.accountId`, cached), and the key's row read here can miss an answer a
 * concurrent request committed between this statement's snapshot and its lock: then the answer's
 * insert meets a unique violation and the caller runs the statement again, which replays.
 */
const TRANSFER = statement(
  'wallet_transfer_v1',
  `with claim as (
    select case when $5::text is null then true else pg_try_advisory_xact_lock($1::bigint) end as ok
  ),
  prior as (
    select k.status, k.request_hash, k.response, k.resource_id,
      (k.locked_until is null or k.locked_until < $17::timestamptz) as lease_over
    from idempotency_keys k, claim
    where claim.ok and k.user_id = $2::uuid and k.environment = $3::environment and k.operation = $4::text
      and k.key = $5::text
  ),
  locked as (
    select id, balance, allow_negative from ledger_accounts
    where id in ($7::uuid, $8::uuid)
      and (select ok from claim) and not exists (select 1 from prior)
    order by id
    for update
  ),
  moved as (
    update ledger_accounts a
    set balance = a.balance + case when a.id = $7::uuid then -$9::bigint else $9::bigint end
    from locked l
    where a.id = l.id
      and exists (select 1 from locked s where s.id = $7::uuid and (s.allow_negative or s.balance >= $9::bigint))
    returning a.id, a.balance
  ),
  posting as (
    insert into ledger_postings (id, environment, kind, reference, description)
    select $18::uuid, $3::environment, 'transfer', $10::text, $19::text where exists (select 1 from moved)
  ),
  entries as (
    insert into ledger_entries (posting_id, account_id, amount, balance_after)
    select $18::uuid, m.id, case when m.id = $7::uuid then -$9::bigint else $9::bigint end, m.balance from moved m
  ),
  transactions as (
    insert into wallet_transactions
      (id, user_id, environment, type, status, amount, reference, description, counterparty, created_at, updated_at)
    select $10::uuid, $2::uuid, $3::environment, 'TRANSFER_OUT'::wallet_transaction_type, 'COMPLETED'::wallet_transaction_status, $9::bigint, $13::text, $14::text,
      $15::jsonb, $17::timestamptz, $17::timestamptz
    where exists (select 1 from moved)
    union all
    select $11::uuid, $12::uuid, $3::environment, 'TRANSFER_IN'::wallet_transaction_type, 'COMPLETED'::wallet_transaction_status, $9::bigint, $13::text || ':in', $14::text,
      $16::jsonb, $17::timestamptz, $17::timestamptz
    where exists (select 1 from moved)
  ),
  answer as (
    insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, response)
    select $2::uuid, $3::environment, $4::text, $5::text, $6::text, 'done'::idempotency_status, $20::jsonb
    where $5::text is not null and exists (select 1 from moved)
  ),
  event as (
    insert into events (type, user_id, environment, data, created_at)
    select '${EVENT_TYPE}', owner, $3::environment, data, $17::timestamptz
    from (values ($2::uuid, $21::jsonb), ($12::uuid, $22::jsonb)) as e(owner, data)
    where exists (select 1 from moved)
    returning id, user_id
  ),
  deliveries as (
    insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at)
    select endpoint.id, event.id, $17::timestamptz
    from event join webhook_endpoints endpoint on endpoint.user_id = event.user_id
    where endpoint.environment = $3::environment and endpoint.enabled and endpoint.deleted_at is null
      and ('${EVENT_TYPE}' = any(endpoint.event_types) or '${ALL_KINDS}' = any(endpoint.event_types))
    returning id, endpoint_id
  ),
  queued as (
    insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at)
    select '${DELIVERY_JOB}', '${laneOf(DELIVERY_JOB)}', endpoint.user_id::text, d.endpoint_id::text,
      jsonb_build_object('deliveryId', d.id) || $23::jsonb, $17::timestamptz
    from deliveries d join webhook_endpoints endpoint on endpoint.id = d.endpoint_id
  )
  select (select ok from claim) as locked, p.status, p.request_hash, p.response, p.resource_id, p.lease_over,
    (select count(*) from moved)::int as moved
  from (select 1) one left join prior p on true`,
);

export interface TransferWrite {
  environment: Environment;
  senderId: string;
  recipient: { id: string; email: string };
  senderAccountId: string;
  recipientAccountId: string;
  amount: bigint;
  reference: string;
  narration: string | null;
  at: Date;
  /** The Idempotency-Key with its request's fingerprint, if the caller sent one. */
  key?: { key: string; requestHash: string };
}

export type TransferOutcome =
  | { done: WalletTransactionRow }
  /** The key's row (busy, answered, or taken by another request): see `claimOf`. */
  | { claim: KeyRow }
  | { insufficient: true };

/** The sender's row of a transfer, as the service answers it (and the key replays it). */
function outgoingRow(w: TransferWrite, id: string): WalletTransactionRow {
  return {
    id,
    userId: w.senderId,
    environment: w.environment,
    type: 'TRANSFER_OUT',
    status: 'COMPLETED',
    amount: w.amount,
    fee: 0n,
    currency: 'NGN',
    reference: w.reference,
    description: w.narration,
    counterparty: { userId: w.recipient.id, email: w.recipient.email },
    version: 1,
    createdAt: w.at,
    updatedAt: w.at,
  };
}

/** `transaction.completed` data, as `recordTransactionEvent` writes it. */
const eventData = (id: string, reference: string, type: string, amount: bigint, at: Date) =>
  JSON.stringify({
    id,
    reference,
    type,
    status: 'COMPLETED',
    amount: nairaNumber(amount),
    currency: 'NGN',
    version: 1,
    updatedAt: at.toISOString(),
  });

export async function writeTransfer(
  db: Database,
  w: TransferWrite,
  storable: (row: WalletTransactionRow) => Stored,
): Promise<TransferOutcome> {
  const outId = crypto.randomUUID();
  const inId = crypto.randomUUID();
  const out = outgoingRow(w, outId);
  const at = w.at.toISOString();
  const [row] = await runStatement<KeyRow & { moved: number }>(db, TRANSFER, [
    w.key
      ? keyLockId({ userId: w.senderId, environment: w.environment, operation: TRANSFER_OPERATION }, w.key.key)
      : null,
    w.senderId,
    w.environment,
    TRANSFER_OPERATION,
    w.key?.key ?? null,
    w.key?.requestHash ?? null,
    w.senderAccountId,
    w.recipientAccountId,
    w.amount.toString(),
    outId,
    inId,
    w.recipient.id,
    w.reference,
    w.narration,
    JSON.stringify(out.counterparty),
    JSON.stringify({ userId: w.senderId }),
    at,
    crypto.randomUUID(),
    `Transfer ${w.reference}`,
    JSON.stringify(storable(out)),
    eventData(outId, w.reference, 'TRANSFER_OUT', w.amount, w.at),
    eventData(inId, `${w.reference}:in`, 'TRANSFER_IN', w.amount, w.at),
    traceContextJson(),
  ]);
  if (row!.moved > 0) return { done: out };
  if (!row!.locked || row!.status !== null) return { claim: row! };
  return { insufficient: true };
}
