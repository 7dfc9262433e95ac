import { eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { ledgerHolds } from '../../db/ledger-schema.js';
import type { Environment } from '../auth/permissions.js';
import { TRANSACTION } from './transaction-lifecycle.js';
import { transition } from '../lifecycle/transition.js';
import type { FailHeldTransaction } from '../money/holds.js';
import { transactionStore, type WalletTransactionRow } from './transaction-store.js';
import { recordTransactionEvent } from './wallet-events.js';

/**
 * The wallet's half of a hold's expiry (money/holds.ts `HoldExpiryHandler`): fails the PENDING
 * transaction the expired hold paid for, with its `transaction.failed` event; nothing when it is no
 * longer pending (settled meanwhile).
 */
export const failExpiredHoldTransaction: FailHeldTransaction = async (tx, transactionId, at) => {
  const failed = await transactionStore.settle(tx, transactionId, 'FAILED', at);
  if (failed) await recordTransactionEvent(tx, failed, at);
};

/**
 * Settles the PENDING wallet transaction a hold pays for: the one the hold names
 * (`transaction_id`), or, for holds placed before that link existed, the owner's transaction of the
 * operation's reference. By the hold, never by reference alone: an operation whose transaction was
 * never opened (a scheduled bill refused before its hold) must not settle another operation's
 * transaction that holds the same reference.
 */
export async function settleHeldTransaction(
  tx: Executor,
  holdId: string,
  owner: { userId: string; environment: Environment },
  reference: string,
  to: 'COMPLETED' | 'FAILED',
  at: Date,
): Promise<WalletTransactionRow | undefined> {
  const [hold] = await tx
    .select({ transactionId: ledgerHolds.transactionId })
    .from(ledgerHolds)
    .where(eq(ledgerHolds.id, holdId));
  if (!hold?.transactionId) return settleWalletTransaction(tx, owner, reference, to, at);
  return settlePending(tx, await transactionStore.findById(tx, owner, hold.transactionId), to, at);
}

/** The transaction's move from PENDING, with its event; nothing if it is gone or no longer pending. */
const settlePending = (
  tx: Executor,
  current: WalletTransactionRow | undefined,
  to: 'COMPLETED' | 'FAILED',
  at: Date,
): Promise<WalletTransactionRow | undefined> =>
  current?.status === 'PENDING'
    ? transition(tx, TRANSACTION, current.id, 'PENDING', to, at)
    : Promise.resolve(undefined);

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
  return settlePending(tx, await transactionStore.findByReference(tx, owner, reference), to, at);
}
