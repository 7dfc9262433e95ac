import type { billRecords } from '../../db/bills-schema.js';
import type { PageBlock } from '../pagination.js';
import type { BillType } from './bills-provider.js';

/** A bill payment's record as this gateway stores it; its events are lifecycle BILL's (`bill.payment.successful` / `.failed`). */
export type BillRecordRow = typeof billRecords.$inferSelect;

/**
 * A bill transaction record as the bills domain gives it (the spec's resource; amounts in kobo),
 * whoever keeps it: a stored row of this gateway is one, and so is a record read from an upstream
 * REST v1 deployment (facade mode). What the spec does not give is optional: the graph served in
 * facade mode leaves those fields out (docs/facade.md).
 */
export interface BillRecord {
  id: string;
  createdAt: Date;
  /** Absent from an upstream's payment answer (the spec's payment answers leave it out): looked up when asked. */
  updatedAt?: Date;
  deletedDate?: Date | null;
  userId: string;
  reference: string;
  billerCode: string;
  itemCode: string;
  customer: string;
  /** The face value, in kobo. */
  amount: bigint;
  type: BillType;
  status: 'PENDING' | 'SUCCESS' | 'FAILED';
  /** The provider's raw answer as a JSON value (this gateway's own records). */
  providerData?: unknown;
  /** The provider's raw answer as the text an upstream gave (the spec's `providerData` is a string). */
  providerDataText?: string | null;
  txRef: string | null;
  billerName: string;
  validityPeriod: string | null;
  metadata: string | null;
  token: string | null;
  units: string | null;
  /** This gateway's own: charged on top of amount, in kobo (the spec's record has no fee). */
  fee?: bigint;
  customerName?: string | null;
  failureReason?: string | null;
  version?: number;
}

/** One page of records: the spec's pagination block. */
export type BillRecordPage = { bills: BillRecord[] } & PageBlock;

/** A scheduled run counted but not paid, kept on its schedule (`bill_schedules.skipped_runs`). */
export { SKIPPED_RUNS_KEPT, type SkippedBillRun } from '../../db/bills-schema.js';
