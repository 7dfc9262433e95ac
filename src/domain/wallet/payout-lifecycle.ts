import { payouts } from '../../db/wallet-schema.js';
import type { PayoutEventData } from '../events/payloads.js';
import type { Lifecycle, RowOf } from '../lifecycle/lifecycle.js';
import type { HeldKind } from '../money/held-kind.js';
import type { TransferState } from '../payments/payments-provider.js';
import { nairaNumber } from './naira.js';

/** The job that settles a payout no request settled (the process died, or the provider had no answer yet). */
export const PAYOUT_RECONCILE_JOB = 'payout.reconcile';

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

const TRANSFER_FAILED = 'The provider reported the transfer failed.';

/**
 * A payout as a held operation (money/held-operation.ts): what the provider's word on the transfer
 * does to it. Succeeded captures amount + fee; failed releases it; anything else moves an
 * initiated payout to processing (the hold kept, the wallet transaction told) for reconciliation.
 */
export const PAYOUT_HELD: HeldKind<RowOf<typeof payouts>, TransferState> = {
  lifecycle: PAYOUT,
  name: 'Payout',
  settleColumns: ['providerRef', 'failureReason'],
  change(row, state) {
    if (row.status === 'completed' || row.status === 'failed') return { none: true };
    const providerRef = state.providerRef ?? row.providerRef;
    if (state.status === 'succeeded' || state.status === 'failed') {
      const succeeded = state.status === 'succeeded';
      return {
        settle: succeeded ? 'capture' : 'release',
        to: succeeded ? 'completed' : 'failed',
        set: { providerRef, failureReason: succeeded ? null : (state.reason ?? TRANSFER_FAILED) },
      };
    }
    if (row.status === 'processing') return { none: true };
    return { keep: true, to: 'processing', set: { providerRef }, stage: 'processing' };
  },
};
