import { payouts } from '../../db/wallet-schema.js';
import type { PayoutEventData } from '../events/payloads.js';
import type { Lifecycle, RowOf } from '../lifecycle/lifecycle.js';
import { nairaNumber } from './naira.js';

/** A payout's event `data` from its row: the one builder its producers share. */
export const payoutEventData = (row: typeof payouts.$inferSelect): PayoutEventData => ({
  reference: row.reference,
  status: row.status,
  amount: nairaNumber(row.amount),
  fee: nairaNumber(row.fee),
  currency: 'NGN',
  bankName: row.bankName,
  accountNumber: row.accountNumber,
  accountName: row.accountName,
  version: row.version,
  updatedAt: row.updatedAt.toISOString(),
});

/** initiated (held) → processing (the provider accepted it) → completed (captured) | failed (released). */
export const PAYOUT: Lifecycle<RowOf<typeof payouts>> = {
  kind: 'payout',
  table: payouts,
  versioned: true,
  data: payoutEventData,
  moves: {
    initiated: { processing: ['payout.processing'], completed: ['payout.completed'], failed: ['payout.failed'] },
    processing: { completed: ['payout.completed'], failed: ['payout.failed'] },
    completed: {},
    failed: {},
  },
};
