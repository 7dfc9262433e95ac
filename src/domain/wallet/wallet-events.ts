import type { Executor } from '../../db/client.js';
import { recordEvent } from '../events/outbox.js';
import { nairaNumber } from './naira.js';
import type { WalletTransactionRow } from './transaction-store.js';

const TRANSACTION_EVENT = { PENDING: 'transaction.created', COMPLETED: 'transaction.completed', FAILED: 'transaction.failed' } as const;

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
