import type { ListWindow, ProviderRecord, RecordStatus } from '../reconciliation/records.js';

/**
 * An NGN payments provider: card tokens, charges, virtual accounts, banks and transfers. The
 * sandbox simulates one in-process (sandbox-payments-provider.ts); production talks to Flutterwave.
 * Amounts are kobo. A provider's failures are classified by upstream/ (refused, outcome unknown,
 * rate limited, unavailable); the caller keeps an operation whose outcome is unknown pending until
 * reconciliation.
 */

export interface CardDetails {
  number: string;
  expMonth: number;
  expYear: number;
  cvv: string;
}

export interface CardToken {
  token: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export type NextAction =
  | { type: 'requires_pin'; requires_pin: Record<string, never> }
  | { type: 'requires_otp'; requires_otp: { note: string } }
  | { type: 'redirect_url'; redirect_url: { url: string } }
  | { type: 'payment_instruction'; payment_instruction: { note: string } };

export type ChargeStatus = 'pending' | 'succeeded' | 'failed';

export interface ChargeState {
  providerRef: string;
  status: ChargeStatus;
  nextAction?: NextAction;
  reason?: string;
}

export interface Customer {
  email: string;
  name: string;
  phoneNumber: string;
}

export type Authorization = { type: 'pin'; pin: string } | { type: 'otp'; otp: string } | { type: '3ds' };

export interface PayInAccount {
  providerRef: string;
  accountNumber: string;
  bankName: string;
  accountName: string;
  expiresAt: Date | null;
  note: string;
}

export interface Bank {
  code: string;
  name: string;
}

export type TransferStatus = 'pending' | 'succeeded' | 'failed' | 'not_found';

export interface TransferState {
  providerRef: string | null;
  status: TransferStatus;
  reason?: string;
}

export interface PaymentsProvider {
  readonly name: string;
  /**
   * How soon a pending charge is first asked about, in case the provider's webhook is lost; absent
   * for a provider that settles every charge itself (the sandbox's simulated payers).
   */
  readonly pollChargesAfterMs?: number;
  /**
   * A simulated payer (sandbox only): in how many ms a deposit of this method and amount arrives by
   * itself, or undefined if it never does. Absent for real providers, whose payers are real; a
   * provider without it cannot simulate transfers either.
   */
  simulatedArrivalMs?(deposit: { method: string; amount: bigint }): number | undefined;
  tokenizeCard(card: CardDetails): Promise<CardToken>;
  chargeCard(charge: {
    reference: string;
    amount: bigint;
    cardToken: string;
    customer: Customer;
    redirectUrl?: string;
  }): Promise<ChargeState>;
  /** Continues a pending charge; `step` is the action it is waiting for. */
  authorize(
    charge: { providerRef: string; step: NextAction['type'] },
    authorization: Authorization,
  ): Promise<ChargeState>;
  chargeStatus(providerRef: string): Promise<ChargeState>;
  /** A one-off account to pay into by bank transfer, valid until `expiresAt`. */
  bankTransferAccount(charge: { reference: string; amount: bigint; customer: Customer }): Promise<PayInAccount>;
  ussd(charge: { reference: string; amount: bigint; bankCode: string; customer: Customer }): Promise<ChargeState>;
  paymentLink(charge: {
    reference: string;
    amount: bigint;
    customer: Customer;
    redirectUrl: string;
    title: string;
  }): Promise<{ providerRef: string; link: string }>;
  permanentAccount(owner: { reference: string; customer: Customer }): Promise<PayInAccount>;
  banks(): Promise<Bank[]>;
  resolveAccount(account: { bankCode: string; accountNumber: string }): Promise<string>;
  transfer(transfer: {
    reference: string;
    amount: bigint;
    bankCode: string;
    accountNumber: string;
    accountName: string;
    narration: string;
  }): Promise<TransferState>;
  transferStatus(reference: string): Promise<TransferState>;
  /** Reconciliation: money the provider collected for the gateway (charges, transfers into accounts) in the window. */
  listCollections(window: ListWindow): Promise<ProviderRecord[]>;
  /** Reconciliation: transfers the provider sent out for the gateway (payouts) in the window. */
  listTransfers(window: ListWindow): Promise<ProviderRecord[]>;
  /**
   * Reconciliation: settlements (collected money paid on to the merchant) the provider made in the
   * window, each with its transactions. Absent where the provider settles nothing (the sandbox).
   */
  listSettlements?(window: ListWindow): Promise<Settlement[]>;
}

/** One settlement batch: its net amount, and the collections it settled with their fees (kobo). */
export interface Settlement {
  id: string;
  status: RecordStatus;
  currency: string;
  /** What was paid on to the merchant. */
  netAmount: bigint;
  /** Taken from the batch as a whole, not from one transaction (refunds, chargebacks). */
  deductions: bigint;
  createdAt: Date;
  /** Each settled collection: `amount` charged, `fee` all fees on it (`providerRef` the provider's transaction id). */
  transactions: Array<ProviderRecord & { amount: bigint; fee: bigint }>;
}
