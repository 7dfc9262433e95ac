import { billRecords } from '../../db/bills-schema.js';
import type { BillEventData } from '../events/payloads.js';
import type { Lifecycle, RowOf } from '../lifecycle/lifecycle.js';
import type { HeldKind } from '../money/held-kind.js';
import { nairaNumber } from '../wallet/naira.js';
import type { BillOutcome } from './bills-provider.js';

/** The job that asks the provider about a PENDING bill until it settles (the request's safety net). */
export const BILL_STATUS_POLL_JOB = 'bill.status-poll';

/** A bill payment's event `data` from its record: the one builder its producers share. */
export const billEventData = (row: typeof billRecords.$inferSelect): BillEventData => ({
  reference: row.reference,
  status: row.status as BillEventData['status'],
  amount: nairaNumber(row.amount),
  currency: 'NGN',
  billerName: row.billerName,
  customerName: row.customerName,
  customerId: row.customer,
  version: row.version,
  updatedAt: row.updatedAt.toISOString(),
});

/** PENDING (held, maybe sent) → SUCCESS (captured) | FAILED (released). */
export const BILL: Lifecycle<RowOf<typeof billRecords>> = {
  kind: 'bill',
  table: billRecords,
  versioned: true,
  data: billEventData,
  moves: {
    PENDING: { SUCCESS: ['bill.payment.successful'], FAILED: ['bill.payment.failed'] },
    SUCCESS: {},
    FAILED: {},
  },
};

/**
 * A bill as a held operation (money/held-operation.ts): what the provider's outcome does to a
 * PENDING record. SUCCESS captures amount + fee and keeps the token; FAILED releases it; PENDING
 * keeps the provider's latest word for the poll or the webhook. A settled record stays as it is.
 */
export const BILL_HELD: HeldKind<RowOf<typeof billRecords>, BillOutcome> = {
  lifecycle: BILL,
  name: 'Bill record',
  settleColumns: ['txRef', 'providerData', 'token', 'units', 'failureReason'],
  change(row, outcome) {
    if (row.status !== 'PENDING') return { none: true };
    if (outcome.status === 'PENDING') return { note: { providerData: outcome.providerData } };
    const success = outcome.status === 'SUCCESS';
    return {
      settle: success ? 'capture' : 'release',
      to: outcome.status,
      set: {
        txRef: outcome.txRef ?? row.txRef,
        providerData: outcome.providerData,
        token: success ? (outcome.token ?? null) : null,
        units: success ? (outcome.units ?? null) : null,
        failureReason: success ? null : outcome.reason,
      },
    };
  },
};
