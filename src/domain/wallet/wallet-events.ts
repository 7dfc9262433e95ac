import type { Executor } from '../../db/client.js';
import { recordEvent } from '../events/outbox.js';
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
  await recordEvent(
    tx,
    moneyEvent(
      update ? 'transaction.updated' : TRANSACTION_EVENT[row.status],
      row,
      transactionEventData(row, update?.stage),
    ),
    at,
  );
}

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

/**
 * Opens a PENDING wallet transaction (a deposit, payout or bill on its way) with its
 * `transaction.created` event, in the caller's transaction.
 */
export async function openPendingTransaction(
  tx: Executor,
  owner: { userId: string; environment: WalletTransactionRow['environment'] },
  transaction: {
    /** Given when something written before it names it (a hold's `transaction_id`). */
    id?: string;
    type: WalletTransactionRow['type'];
    amount: bigint;
    fee?: bigint;
    reference: string;
    description: string | null;
    counterparty: Record<string, unknown>;
  },
  at: Date,
): Promise<WalletTransactionRow> {
  const row = await transactionStore.insert(tx, {
    userId: owner.userId,
    environment: owner.environment,
    status: 'PENDING',
    ...transaction,
    createdAt: at,
    updatedAt: at,
  });
  await recordTransactionEvent(tx, row, at);
  return row;
}
