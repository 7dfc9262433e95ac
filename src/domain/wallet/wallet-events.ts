import type { Executor } from '../../db/client.js';
import type { NewEvent } from '../events/event.js';
import { recordEvent, recordEvents } from '../events/outbox.js';
import { transactionEventData } from './transaction-lifecycle.js';
import { moneyEvent } from '../money-event.js';
import { transactionStore, type WalletTransactionRow } from './transaction-store.js';

const TRANSACTION_EVENT = {
  PENDING: 'transaction.created',
  COMPLETED: 'transaction.completed',
  FAILED: 'transaction.failed',
} as const;

/**
 * `transaction.*` for a wallet transaction, in the caller's transaction. `transaction.created`
 * for a new pending one, `transaction.completed` / `.failed` when it settles (a transfer, which
 * is born settled, emits only that).
 */
export async function recordTransactionEvent(
  tx: Executor,
  row: WalletTransactionRow,
  at: Date,
  update?: { stage: string },
): Promise<void> {
  await recordEvent(tx, transactionEvent(row, update), at);
}

/** The `transaction.*` event of a wallet transaction as it stands (see recordTransactionEvent). */
const transactionEvent = (row: WalletTransactionRow, update?: { stage: string }): NewEvent =>
  moneyEvent(
    update ? 'transaction.updated' : TRANSACTION_EVENT[row.status],
    row,
    transactionEventData(row, update?.stage),
  );

/**
 * `transaction.updated`: the wallet transaction behind a deposit or payout moved on without
 * settling (a card deposit now awaits its PIN or OTP, a payout the provider accepted is
 * processing). `stage` says where it stands; the transaction stays PENDING with a new version.
 */
export async function recordTransactionProgress(
  tx: Executor,
  owner: { userId: string; environment: WalletTransactionRow['environment'] },
  reference: string,
  stage: string,
  at: Date,
): Promise<void> {
  const current = await transactionStore.findByReference(tx, owner, reference);
  if (!current) return;
  const touched = await transactionStore.touch(tx, current.id, at);
  if (touched) await recordTransactionEvent(tx, touched, at, { stage });
}

/** What an operation says of the PENDING wallet transaction it opens; the rest is the same for every one. */
export interface PendingTransaction {
  /** Given when something written before it names it (a hold's `transaction_id`). */
  id?: string;
  type: WalletTransactionRow['type'];
  amount: bigint;
  fee?: bigint;
  reference: string;
  description: string | null;
  counterparty: Record<string, unknown>;
}

/**
 * A PENDING wallet transaction's whole row, every column set: what `openPendingTransaction`
 * inserts, and what a one-statement open (money/held-open.ts) inserts column by column, so both
 * ways write the same row from this one rule.
 */
export function pendingTransactionRow(
  owner: { userId: string; environment: WalletTransactionRow['environment'] },
  transaction: PendingTransaction,
  at: Date,
): WalletTransactionRow {
  return {
    id: transaction.id ?? crypto.randomUUID(),
    userId: owner.userId,
    environment: owner.environment,
    type: transaction.type,
    status: 'PENDING',
    amount: transaction.amount,
    fee: transaction.fee ?? 0n,
    currency: 'NGN',
    reference: transaction.reference,
    description: transaction.description,
    counterparty: transaction.counterparty,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
}

/** `transaction.created`'s data for a row `pendingTransactionRow` built, as a one-statement open writes it. */
export const pendingTransactionEvent = (row: WalletTransactionRow) => ({
  type: TRANSACTION_EVENT.PENDING,
  data: transactionEventData(row),
});

/**
 * Opens a PENDING wallet transaction (a deposit, payout or bill on its way) with its
 * `transaction.created` event, in the caller's transaction. `earlier`: the caller's own events
 * of the same change (a payout's `payout.initiated`), recorded before it in the same statement,
 * one round trip for all of them.
 */
export async function openPendingTransaction(
  tx: Executor,
  owner: { userId: string; environment: WalletTransactionRow['environment'] },
  transaction: PendingTransaction,
  at: Date,
  earlier: readonly NewEvent[] = [],
): Promise<WalletTransactionRow> {
  const row = await transactionStore.insert(tx, pendingTransactionRow(owner, transaction, at));
  if (earlier.length === 0) await recordTransactionEvent(tx, row, at);
  else await recordEvents(tx, [...earlier, transactionEvent(row)], at);
  return row;
}
