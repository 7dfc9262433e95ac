/**
 * The `data` of every money event, typed once: producers build it (src/domain/lifecycle), webhooks
 * send it as stored, and subscription resolvers read it through `dataOf`. Amounts are naira numbers
 * (the seed's shape); token amounts are decimal text.
 */

export interface DepositEventData {
  reference: string;
  status: 'INITIATED' | 'PENDING' | 'COMPLETED' | 'FAILED';
  amount: number;
  currency: string;
  method: string;
  accountNumber: string | null;
  bankName: string | null;
  version: number;
  updatedAt: string;
}

export interface PayoutEventData {
  reference: string;
  status: 'initiated' | 'processing' | 'completed' | 'failed';
  amount: number;
  fee: number;
  currency: 'NGN';
  bankName: string;
  accountNumber: string;
  accountName: string;
  version: number;
  updatedAt: string;
}

export interface BillEventData {
  reference: string;
  status: 'SUCCESS' | 'FAILED';
  amount: number;
  currency: 'NGN';
  billerName: string;
  customerName: string | null;
  customerId: string;
  version: number;
  updatedAt: string;
}

export interface TransactionEventData {
  id: string;
  reference: string;
  type: string;
  status: 'PENDING' | 'COMPLETED' | 'FAILED';
  amount: number;
  currency: string;
  version: number;
  updatedAt: string;
  /** On `transaction.updated`: where a pending transaction stands (requires_pin, processing…). */
  stage?: string;
}

export interface OfframpEventData {
  reference: string;
  status: string;
  amount: string;
  token: string;
  network: string;
  fiatAmount: number;
  fiatCurrency: string;
  bankName: string;
  accountNumber: string;
}

/** Event kind → its `data`. */
export interface EventDataOf {
  'deposit.initiated': DepositEventData;
  'deposit.pending': DepositEventData;
  'deposit.completed': DepositEventData;
  'deposit.failed': DepositEventData;
  'payout.initiated': PayoutEventData;
  'payout.processing': PayoutEventData;
  'payout.completed': PayoutEventData;
  'payout.failed': PayoutEventData;
  'bill.payment.successful': BillEventData;
  'bill.payment.failed': BillEventData;
  'transaction.created': TransactionEventData;
  'transaction.updated': TransactionEventData;
  'transaction.completed': TransactionEventData;
  'transaction.failed': TransactionEventData;
  'offramp.initiated': OfframpEventData;
  'offramp.deposit_received': OfframpEventData;
  'offramp.processing': OfframpEventData;
  'offramp.fiat_sent': OfframpEventData;
  'offramp.completed': OfframpEventData;
  'offramp.failed': OfframpEventData;
}

export type MoneyEventKind = keyof EventDataOf;

/** A stored event's `data` as its kind's type (for resolvers reading a field). */
export const dataOf = <K extends MoneyEventKind>(event: { type: string; data: Record<string, unknown> }, _kind?: K) =>
  event.data as unknown as EventDataOf[K];
