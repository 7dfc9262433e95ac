import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import { failureOutcome } from '../upstream/upstream-error.js';

/** A bills provider: the catalogue, customer validation and payments. Amounts are kobo. */

export const BILL_TYPES = ['AIRTIME', 'MOBILEDATA', 'CABLEBILLS', 'UTILITYBILLS'] as const;
export type BillType = (typeof BILL_TYPES)[number];

export interface BillCategory {
  code: BillType;
  name: string;
  description: string;
}

export interface Biller {
  billerCode: string;
  name: string;
  /** What callers may use instead of the code: "MTN", "DSTV", "IKEDC". */
  shortName: string;
  category: BillType;
  /** For electricity: prepaid or postpaid; null otherwise. */
  meterType: 'prepaid' | 'postpaid' | null;
}

export interface BillItem {
  itemCode: string;
  billerCode: string;
  name: string;
  /** Kobo; 0 means the caller sets the amount. */
  amount: bigint;
  fee: bigint;
  /** What `customer` is: "Mobile Number", "Meter Number", "Smartcard Number". */
  label: string;
  /** e.g. "30 days" for a data bundle or a subscription. */
  validityPeriod: string | null;
}

export interface CustomerValidation {
  customerName: string;
  customer: string;
  billerCode: string;
  itemCode: string;
  minimum: bigint;
  maximum: bigint;
  address: string | null;
}

export type BillOutcome =
  | {
      status: 'SUCCESS';
      txRef: string;
      token?: string | null;
      units?: string | null;
      providerData: Record<string, unknown>;
    }
  | { status: 'FAILED'; txRef: string | null; reason: string; providerData: Record<string, unknown> }
  | { status: 'PENDING'; txRef: string | null; providerData: Record<string, unknown> };

export interface BillsProvider {
  readonly name: string;
  categories(): Promise<BillCategory[]>;
  billers(category: BillType): Promise<Biller[]>;
  items(billerCode: string): Promise<BillItem[]>;
  validate(input: { itemCode: string; billerCode: string; customer: string }): Promise<CustomerValidation>;
  /** Pays; a timeout or 5xx is PENDING (never a guess), settled later by `status` or the webhook. */
  pay(input: {
    billerCode: string;
    itemCode: string;
    customer: string;
    amount: bigint;
    reference: string;
  }): Promise<BillOutcome>;
  /** What the provider knows of a payment; NOT_FOUND when it never received it. */
  status(reference: string): Promise<BillOutcome | { status: 'NOT_FOUND' }>;
  /** Reconciliation: the provider's bill payments in the window, under the reference the gateway sent. */
  listPayments(window: ListWindow): Promise<ProviderRecord[]>;
}

/** The reference a provider knows a bill payment by: unique across users (a record's id). */
export const providerReference = (record: { id: string }) => `pgw-${record.id}`;

/**
 * A held bill sent to `provider`, its answer as an outcome: a failure is classified
 * (upstream/upstream-error.ts), and only a refusal fails the bill; a timeout or 5xx is not
 * guessed, it stays PENDING for the status poll.
 */
export const payBillThrough =
  (provider: BillsProvider) =>
  async (record: {
    id: string;
    billerCode: string;
    itemCode: string;
    customer: string;
    amount: bigint;
  }): Promise<BillOutcome> => {
    try {
      return await provider.pay({
        billerCode: record.billerCode,
        itemCode: record.itemCode,
        customer: record.customer,
        amount: record.amount,
        reference: providerReference(record),
      });
    } catch (error) {
      const failure = failureOutcome(error);
      return failure.refused
        ? { status: 'FAILED', txRef: null, reason: failure.reason, providerData: {} }
        : { status: 'PENDING', txRef: null, providerData: { error: failure.reason } };
    }
  };
