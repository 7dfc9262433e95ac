import { deposits } from '../../db/wallet-schema.js';
import type { DepositEventData } from '../events/payloads.js';
import type { Lifecycle, RowOf } from '../lifecycle/lifecycle.js';
import { nairaNumber } from './naira.js';

/** Provider deposits: ask the provider, in case its webhook was lost (and finish one cut off between its commits). */
export const DEPOSIT_RECONCILE_JOB = 'deposit.reconcile';

/** A deposit's event `data` from its row: the one builder its producers share. */
export const depositEventData = (row: typeof deposits.$inferSelect): DepositEventData => ({
  reference: row.reference,
  status: row.status.toUpperCase() as DepositEventData['status'],
  amount: nairaNumber(row.amount),
  currency: row.currency,
  method: row.method,
  accountNumber: row.accountNumber,
  bankName: row.bankName,
  version: row.version,
  updatedAt: row.updatedAt.toISOString(),
});

/** initiated → pending (a step awaited) → completed | failed; pending → pending is a new step (PIN, then OTP). */
export const DEPOSIT: Lifecycle<RowOf<typeof deposits>> = {
  kind: 'deposit',
  table: deposits,
  versioned: true,
  data: depositEventData,
  moves: {
    initiated: { pending: ['deposit.pending'], completed: ['deposit.completed'], failed: ['deposit.failed'] },
    pending: { pending: [], completed: ['deposit.completed'], failed: ['deposit.failed'] },
    completed: {},
    failed: {},
  },
};
