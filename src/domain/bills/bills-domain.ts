import type { Caller } from '../users/user-directory.js';
import type { BillPaymentInput } from './bill-catalogue.js';
import type { BillRecord, BillRecordPage } from './bill-record.js';
import type { CustomerValidation } from './bills-provider.js';
import type { RecordFilter } from './bills-service.js';

/**
 * The bills domain as the graph reads it: the operations whose REST paths the spec shows (pay,
 * validate, the records list and a record by reference), plus mobile data and cable TV, which the
 * spec only names. Bound once at start-up: to this gateway's own BillsService (service mode,
 * local-bills.ts) or to the upstream REST v1 deployment (facade mode, facade/upstream-bills.ts).
 * Resolvers call it without knowing which.
 */
export interface BillsDomain {
  /** Pays a bill (or schedules it, with `isSchedule`); the caller's Idempotency-Key goes with it. */
  pay(caller: Caller, input: BillPaymentInput, idempotencyKey: string | undefined): Promise<BillRecord>;
  /** The biller's answer about a customer. */
  validate(
    caller: Caller,
    input: { customer: string; billerCode: string; itemCode: string },
  ): Promise<CustomerValidation>;
  /** The caller's records, filtered, sorted and paged. */
  records(caller: Caller, filter: RecordFilter, page: number, limit: number): Promise<BillRecordPage>;
  /** One of the caller's records by reference; otherwise BILL_NOT_FOUND. */
  record(caller: Caller, reference: string): Promise<BillRecord>;
}
