import { walletTransactions } from '../../db/wallet-schema.js';
import type { TransactionEventData } from '../events/payloads.js';
import type { Lifecycle, RowOf } from '../lifecycle/lifecycle.js';
import { nairaNumber } from './naira.js';

/** A wallet transaction's event `data` from its row (with the step it reached, for progress events). */
export const transactionEventData = (
  row: typeof walletTransactions.$inferSelect,
  stage?: string,
): TransactionEventData => ({
  id: row.id,
  reference: row.reference,
  type: row.type,
  status: row.status,
  amount: nairaNumber(row.amount),
  currency: row.currency,
  version: row.version,
  updatedAt: row.updatedAt.toISOString(),
  ...(stage ? { stage } : {}),
});

/**
 * A wallet transaction: what the partner's transaction list shows for every operation above, and
 * the whole of a P2P transfer (born COMPLETED with its postings, so it never moves).
 */
export const TRANSACTION: Lifecycle<RowOf<typeof walletTransactions>> = {
  kind: 'transaction',
  table: walletTransactions,
  versioned: true,
  data: (row) => transactionEventData(row),
  moves: {
    PENDING: { COMPLETED: ['transaction.completed'], FAILED: ['transaction.failed'] },
    COMPLETED: {},
    FAILED: {},
  },
};

/**
 * The one event TRANSACTION's move out of PENDING to `to` emits, for the one-statement settle of a
 * held operation (money/settle-held.ts); undefined when that statement cannot write the move
 * (unlisted, or not exactly one event).
 */
export function transactionSettleEvent(to: 'COMPLETED' | 'FAILED'): string | undefined {
  const events = TRANSACTION.moves.PENDING[to];
  return events?.length === 1 ? events[0] : undefined;
}

/** Whether TRANSACTION's move of this outcome is one the settle statement writes (listed, with one event). */
export const transactionSettles = (to: 'COMPLETED' | 'FAILED') => transactionSettleEvent(to) !== undefined;
