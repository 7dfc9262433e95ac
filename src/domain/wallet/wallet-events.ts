import type { Executor } from '../../db/client.js';
import { recordEvent } from '../events/outbox.js';
import { nairaNumber } from './naira.js';
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
export async function recordTransactionEvent(tx: Executor, row: WalletTransactionRow, at: Date): Promise<void> {
  await recordEvent(
    tx,
    {
      type: TRANSACTION_EVENT[row.status],
      userId: row.userId,
      environment: row.environment,
      data: {
        id: row.id,
        reference: row.reference,
        type: row.type,
        status: row.status,
        amount: nairaNumber(row.amount),
        currency: row.currency,
        version: row.version,
        updatedAt: row.updatedAt.toISOString(),
      },
    },
    at,
  );
}

/**
 * Opens a PENDING wallet transaction (a deposit, payout or bill on its way) with its
 * `transaction.created` event, in the caller's transaction.
 */
export async function openPendingTransaction(
  tx: Executor,
  owner: { userId: string; environment: WalletTransactionRow['environment'] },
  transaction: {
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
