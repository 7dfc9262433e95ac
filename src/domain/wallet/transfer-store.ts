import type { Database } from '../../db/client.js';
import { statement } from '../../db/plain-sql.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Environment } from '../auth/permissions.js';
import { type KeyRow, keyLockId, type Stored } from '../money/key-claim.js';
import { guardedMoveCtes } from '../ledger/ledger-sql.js';
import { claimCtes, doneKeyInsert } from '../money/plain-write.js';
import { groupCommitOf, LOCK_ACCOUNTS } from '../money/group-commit.js';
import { nairaNumber } from './naira.js';
import type { WalletTransactionRow } from './transaction-store.js';

export const TRANSFER_OPERATION = 'wallet.transfer';
const EVENT_TYPE = 'transaction.completed';

/**
 * A P2P transfer as ONE statement, so one round trip and one commit on the request path: the
 * idempotency claim (a transaction-scoped advisory lock on the key's hash, and the key's row), both
 * wallet rows locked in id order (no deadlock between A→B and B→A), the guarded debit and the
 * credit, the posting and its two entries, both wallet transactions, the key's answer, and both
 * `transaction.completed` events (the relay fans them out to webhook deliveries after their
 * commit, events/fan-out.ts). Every write
 * depends on the debit having happened (`moved`), so a busy key, a replay or too little money
 * writes nothing. The caller knows which from the returned row.
 *
 * A statement's writes share one snapshot and cannot see each other's rows, so both accounts must
 * exist beforehand (`ledger.accountId`, cached), and the key's row read here can miss an answer a
 * concurrent request committed between this statement's snapshot and its lock: then the answer's
 * insert meets a unique violation and the caller runs the statement again, which replays.
 */
const TRANSFER = statement(
  'wallet_transfer_v4',
  `with ${claimCtes({ lockId: '$1', userId: '$2', environment: '$3', operation: '$4', key: '$5', now: '$17' })},
  ${guardedMoveCtes({
    from: '$7',
    to: '$8',
    amount: '$9',
    posting: '$18',
    environment: '$3',
    kind: "'transfer'",
    reference: '$10::text',
    description: '$19::text',
  })},
  transactions as (
    insert into wallet_transactions
      (id, user_id, environment, type, status, amount, reference, description, counterparty, created_at, updated_at)
    select $10::uuid, $2::uuid, $3::environment, 'TRANSFER_OUT'::wallet_transaction_type, 'COMPLETED'::wallet_transaction_status, $9::bigint, $13::text, $14::text,
      $15::jsonb, $17::timestamptz, $17::timestamptz
    where exists (select 1 from moved)
    union all
    select $11::uuid, $12::uuid, $3::environment, 'TRANSFER_IN'::wallet_transaction_type, 'COMPLETED'::wallet_transaction_status, $9::bigint, $24::text, $14::text,
      $16::jsonb, $17::timestamptz, $17::timestamptz
    where exists (select 1 from moved)
  ),
  answer as (
    ${doneKeyInsert(
      { userId: '$2', environment: '$3', operation: '$4', key: '$5', requestHash: '$6', response: '$20' },
      'exists (select 1 from moved)',
      false,
    )}
  ),
  event as (
    insert into events (type, user_id, environment, data, created_at, trace_context)
    select '${EVENT_TYPE}', owner, $3::environment, data, $17::timestamptz, nullif($23::jsonb, '{}'::jsonb)
    from (values ($2::uuid, $21::jsonb), ($12::uuid, $22::jsonb)) as e(owner, data)
    where exists (select 1 from moved)
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
  /** The recipient's transaction's reference: `<reference>:in` unless given (see WalletService.transfer). */
  recipientReference?: string;
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

/** A transfer's statement values, built in the caller's context (its trace context goes with the events, for their delivery jobs). */
function prepared(w: TransferWrite, storable: (row: WalletTransactionRow) => Stored) {
  const outId = crypto.randomUUID();
  const inId = crypto.randomUUID();
  const out = outgoingRow(w, outId);
  const at = w.at.toISOString();
  const inReference = w.recipientReference ?? `${w.reference}:in`;
  const values = [
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
    eventData(inId, inReference, 'TRANSFER_IN', w.amount, w.at),
    traceContextJson(),
    inReference,
  ];
  return { w, out, values };
}

function outcomeOf(row: KeyRow & { moved: number }, out: WalletTransactionRow): TransferOutcome {
  if (row.moved > 0) return { done: out };
  if (!row.locked || row.status !== null) return { claim: row };
  return { insufficient: true };
}

/** The group commit's account lock, which begins every batch (a test counts batches by it). */
export { LOCK_ACCOUNTS };

/**
 * Writes a transfer in its sender's group commit (money/group-commit.ts): alone as its single
 * statement (one round trip, one commit) when none of the sender's writes is in flight in this
 * process, else together with the others waiting, in ONE transaction, each its own statement in
 * arrival order (its own balance check, key claim and answer, events), so a busy wallet is not
 * limited to one commit per transfer. Other processes batch their own; the row locks keep them
 * exact between processes.
 */
export function writeTransfer(
  db: Database,
  w: TransferWrite,
  storable: (row: WalletTransactionRow) => Stored,
): Promise<TransferOutcome> {
  const p = prepared(w, storable);
  return groupCommitOf(db).run(w.senderAccountId, {
    st: TRANSFER,
    values: p.values,
    accounts: [w.senderAccountId, w.recipientAccountId],
    read: (row) => outcomeOf(row as unknown as KeyRow & { moved: number }, p.out),
  });
}
