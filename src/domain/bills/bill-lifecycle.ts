import { billRecords } from '../../db/bills-schema.js';
import type { BillEventData } from '../events/payloads.js';
import type { Lifecycle, RowOf } from '../lifecycle/lifecycle.js';
import { nairaNumber } from '../wallet/naira.js';

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
