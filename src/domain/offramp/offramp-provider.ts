import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import type { FiatCurrency, OfframpNetwork, OfframpStatus, OfframpToken } from './catalogue.js';

/** A token the provider accepts on a network. */
export interface OfframpAsset {
  token: OfframpToken;
  network: OfframpNetwork;
  contractAddress: string;
  decimals: number;
}

export interface PayoutInstitution {
  code: string;
  name: string;
  /** bank or mobile_money */
  type: string;
}

export interface Recipient {
  institution: string;
  accountIdentifier: string;
  accountName: string;
  memo: string;
  currency: FiatCurrency;
}

export interface ProviderOrderRequest {
  token: OfframpToken;
  network: OfframpNetwork;
  /** Decimal text in token units. */
  amount: string;
  /** Fiat per token, decimal text, as quoted. */
  rate: string;
  recipient: Recipient;
  reference: string;
  refundAddress?: string;
}

export interface ProviderOrder {
  providerOrderId: string;
  receiveAddress: string;
  validUntil: Date;
  /** Decimal text in token units. */
  senderFee: string;
  transactionFee: string;
}

/** What the provider says an order's state is (from its API or its webhook). */
export interface ProviderOrderState {
  status: OfframpStatus;
  txHash?: string;
  reason?: string;
}

/**
 * A crypto-to-fiat provider. The sandbox simulates one in-process; Paycrest is the production one.
 * Errors are DomainErrors: a pair or value the provider does not serve is BAD_USER_INPUT naming the
 * field, a provider outage SERVICE_UNAVAILABLE.
 */
export interface OfframpProvider {
  readonly name: string;
  assets(): Promise<OfframpAsset[]>;
  /** Fiat per token for selling `amount` of `token` on `network`, decimal text. */
  rate(query: { token: OfframpToken; network: OfframpNetwork; amount: string; fiat: FiatCurrency }): Promise<string>;
  institutions(fiat: FiatCurrency): Promise<PayoutInstitution[]>;
  /** The account holder's name, or null when the provider confirms the account but gives no name. */
  verifyAccount(account: { institution: string; accountIdentifier: string }): Promise<string | null>;
  createOrder(order: ProviderOrderRequest): Promise<ProviderOrder>;
  /** The order's current state, for reconciliation when a webhook did not come (absent in the sandbox, whose lifecycle runs on jobs). */
  orderState?(providerOrderId: string): Promise<ProviderOrderState>;
  /** Reconciliation: the provider's orders created in the window, amounts in token base units (absent in the sandbox). */
  listOrders?(window: ListWindow): Promise<ProviderRecord[]>;
}
