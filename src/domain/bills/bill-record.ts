import type { billRecords } from '../../db/bills-schema.js';

/** A bill payment's record; its events are lifecycle BILL's (`bill.payment.successful` / `.failed`). */
export type BillRecordRow = typeof billRecords.$inferSelect;
