import type { Database } from '../../db/client.js';
import { inTransaction, runStatement, statement, TransactionFailure } from '../../db/plain-sql.js';
import { refusedByServer } from '../../db/settled-query.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Environment } from '../auth/permissions.js';
import { type KeyRow, keyLockId, type Stored } from '../money/key-claim.js';
import { guardedMoveCtes } from '../ledger/ledger-sql.js';
import { claimCtes } from '../money/plain-write.js';
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
    insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, response)
    select $2::uuid, $3::environment, $4::text, $5::text, $6::text, 'done'::idempotency_status, $20::jsonb
    where $5::text is not null and exists (select 1 from moved)
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
type Prepared = ReturnType<typeof prepared>;

function outcomeOf(row: KeyRow & { moved: number }, out: WalletTransactionRow): TransferOutcome {
  if (row.moved > 0) return { done: out };
  if (!row.locked || row.status !== null) return { claim: row };
  return { insufficient: true };
}

async function writeAlone(db: Database, p: Prepared): Promise<TransferOutcome> {
  const [row] = await runStatement<KeyRow & { moved: number }>(db, TRANSFER, p.values);
  return outcomeOf(row!, p.out);
}

/**
 * Both wallet rows of every transfer of a batch, locked in id order before anything else is
 * written: the order every single transfer locks its two rows in too, so batches and single
 * transfers of other processes wait for each other but never deadlock.
 */
export const LOCK_ACCOUNTS = statement(
  'wallet_transfer_batch_lock_v1',
  'select id from ledger_accounts where id = any($1::uuid[]) order by id for update',
);

/** The most transfers one batch commits together. */
export const MAX_BATCH = 64;

interface Pending extends Prepared {
  resolve(outcome: TransferOutcome): void;
  reject(error: unknown): void;
}

/** Per database: the transfers waiting behind each sender account's transfer or batch in flight. */
const queues = new WeakMap<Database, Map<string, Pending[]>>();

function queuesOf(db: Database): Map<string, Pending[]> {
  let byAccount = queues.get(db);
  if (!byAccount) queues.set(db, (byAccount = new Map()));
  return byAccount;
}

/**
 * Writes a transfer. One sender's transfers are coalesced in this process: while one of its
 * transfers (or batches) is in flight, the next ones wait, then commit together in ONE transaction
 * (`writeBatch`), so a busy wallet is not limited to one commit per transfer. A transfer with no
 * other in flight for its sender runs at once as its single statement (one round trip, one commit).
 * Other processes batch their own; the row locks keep them exact between processes.
 */
export function writeTransfer(
  db: Database,
  w: TransferWrite,
  storable: (row: WalletTransactionRow) => Stored,
): Promise<TransferOutcome> {
  const p = prepared(w, storable);
  const byAccount = queuesOf(db);
  const waiting = byAccount.get(w.senderAccountId);
  if (waiting) return new Promise((resolve, reject) => waiting.push({ ...p, resolve, reject }));
  byAccount.set(w.senderAccountId, []);
  const written = writeAlone(db, p);
  void written.then(
    () => drain(db, w.senderAccountId),
    () => drain(db, w.senderAccountId),
  );
  return written;
}

/** Commits the sender's waiting transfers, a batch at a time, until none wait. Never rejects. */
async function drain(db: Database, account: string): Promise<void> {
  const byAccount = queuesOf(db);
  for (;;) {
    const waiting = byAccount.get(account)!;
    if (waiting.length === 0) {
      byAccount.delete(account);
      return;
    }
    const batch = waiting.splice(0, MAX_BATCH);
    if (batch.length === 1) await settle(batch[0]!, () => writeAlone(db, batch[0]!));
    else await writeBatch(db, batch);
  }
}

async function settle(p: Pending, write: () => Promise<TransferOutcome>): Promise<void> {
  try {
    p.resolve(await write());
  } catch (error) {
    p.reject(error);
  }
}

/**
 * One transaction for a batch of one sender's transfers: every wallet row locked first, then each
 * transfer's own statement in arrival order, so each sees the balance the ones before it left (a
 * transfer that would overdraw is refused on its own) and each claims and answers its own
 * Idempotency-Key (a key sent twice in one batch: the second replays the first). Answers are given
 * only after the commit. A transfer whose statement fails (a reference or key a concurrent request
 * took) rolls the batch back with nothing written: the transfers before it commit again as a
 * batch, it runs on its own (and gets its own error), then the ones after it, so one failing
 * transfer fails only itself. A failed COMMIT (outcome unknown) fails them all: running them again
 * could move money twice.
 */
async function writeBatch(db: Database, batch: Pending[]): Promise<void> {
  const accounts = [...new Set(batch.flatMap((p) => [p.w.senderAccountId, p.w.recipientAccountId]))];
  let outcomes: TransferOutcome[];
  let failedAt = -1;
  try {
    outcomes = await inTransaction(db, async (run) => {
      await run(LOCK_ACCOUNTS, [accounts]);
      const answered: TransferOutcome[] = [];
      for (const [i, p] of batch.entries()) {
        failedAt = i;
        const [row] = await run<KeyRow & { moved: number }>(TRANSFER, p.values);
        answered.push(outcomeOf(row!, p.out));
      }
      return answered;
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
  batch.forEach((p, i) => p.resolve(outcomes[i]!));
}

async function writeSome(db: Database, transfers: Pending[]): Promise<void> {
  if (transfers.length > 1) await writeBatch(db, transfers);
  else if (transfers.length === 1) await settle(transfers[0]!, () => writeAlone(db, transfers[0]!));
}
