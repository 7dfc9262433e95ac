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

/**
 * `transaction.*` of a chain transaction (src/domain/solana): a Solana send, swap or arrival. It has
 * no wallet-transaction `id`; its `reference` is the signature and `amount` is decimal text in
 * token units.
 */
export interface ChainTransactionEventData {
  type: 'CRYPTO_TRANSFER' | 'CRYPTO_SWAP' | 'CRYPTO_DEPOSIT';
  status: string;
  reference: string;
  signature: string;
  network: string;
  mint: string;
  amount: string;
  amountRaw: string;
  from: string;
  to?: string;
  updatedAt?: string;
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
  'transaction.created': TransactionEventData | ChainTransactionEventData;
  'transaction.updated': TransactionEventData | ChainTransactionEventData;
  'transaction.completed': TransactionEventData | ChainTransactionEventData;
  'transaction.failed': TransactionEventData | ChainTransactionEventData;
  'offramp.initiated': OfframpEventData;
  'offramp.deposit_received': OfframpEventData;
  'offramp.processing': OfframpEventData;
  'offramp.fiat_sent': OfframpEventData;
  'offramp.completed': OfframpEventData;
  'offramp.failed': OfframpEventData;
}

export type MoneyEventKind = keyof EventDataOf;

/** The kinds each typed subscription streams, typed as kinds of this map. */
export const DEPOSIT_EVENT_KINDS = [
  'deposit.initiated',
  'deposit.pending',
  'deposit.completed',
  'deposit.failed',
] as const satisfies readonly MoneyEventKind[];
export const PAYOUT_EVENT_KINDS = [
  'payout.initiated',
  'payout.processing',
  'payout.completed',
  'payout.failed',
] as const satisfies readonly MoneyEventKind[];
export const TRANSACTION_EVENT_KINDS = [
  'transaction.created',
  'transaction.updated',
  'transaction.completed',
  'transaction.failed',
] as const satisfies readonly MoneyEventKind[];
export const BILL_EVENT_KINDS = [
  'bill.payment.successful',
  'bill.payment.failed',
] as const satisfies readonly MoneyEventKind[];
export const OFFRAMP_UPDATE_KINDS = [
  'offramp.initiated',
  'offramp.deposit_received',
  'offramp.processing',
  'offramp.fiat_sent',
  'offramp.completed',
  'offramp.failed',
] as const satisfies readonly MoneyEventKind[];

/**
 * A stored event's `data` as the type of the kinds a stream carries: `dataOf(event, BILL_EVENT_KINDS)`
 * is a BillEventData. The stream delivers only those kinds (the feed filters by kind), so this is a
 * reading of what the producer wrote with the same type, not a guess.
 */
export const dataOf = <K extends MoneyEventKind>(
  event: { type: string; data: Record<string, unknown> },
  _kinds: readonly K[],
): EventDataOf[K] => event.data as unknown as EventDataOf[K];
