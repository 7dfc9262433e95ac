import type { billRecords } from '../../db/bills-schema.js';

/** A bill payment's record; its events are lifecycle BILL's (`bill.payment.successful` / `.failed`). */
export type BillRecordRow = typeof billRecords.$inferSelect;

/** A scheduled run counted but not paid, kept on its schedule (`bill_schedules.skipped_runs`). */
export { SKIPPED_RUNS_KEPT, type SkippedBillRun } from '../../db/bills-schema.js';
