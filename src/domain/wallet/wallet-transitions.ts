import type { Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import { TRANSACTION } from '../lifecycle/lifecycles.js';
import { transition } from '../lifecycle/transition.js';
import { transactionStore, type WalletTransactionRow } from './transaction-store.js';

/**
 * Settles the PENDING wallet transaction behind an operation (found by the operation's reference),
 * with its `transaction.completed` / `.failed` event; nothing if it is no longer pending.
 */
export async function settleWalletTransaction(
  tx: Executor,
  owner: { userId: string; environment: Environment },
  reference: string,
  to: 'COMPLETED' | 'FAILED',
  at: Date,
): Promise<WalletTransactionRow | undefined> {
  const current = await transactionStore.findByReference(tx, owner, reference);
  if (current?.status !== 'PENDING') return undefined;
  return transition(tx, TRANSACTION, current.id, 'PENDING', to, at);
}
