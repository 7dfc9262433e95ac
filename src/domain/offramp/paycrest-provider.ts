import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError, badInput } from '../errors.js';
import { type AnswerShape, readAnswerPart } from '../upstream/answer-shape.js';
import { requestUpstream } from '../upstream/http.js';
import {
  FIAT_CURRENCIES,
  type FiatCurrency,
  OFFRAMP_NETWORKS,
  OFFRAMP_TOKENS,
  type OfframpNetwork,
  type OfframpStatus,
  type OfframpToken,
} from './catalogue.js';
import { type ListWindow, minorUnitsOf, offrampRecordStatus, type ProviderRecord } from '../reconciliation/records.js';
import type {
  OfframpAsset,
  OfframpProvider,
  PayoutInstitution,
  ProviderOrder,
  ProviderOrderRequest,
  ProviderOrderState,
} from './offramp-provider.js';
import { CREATED_ORDER, INSTITUTIONS, ORDER, ORDER_PAGE, RATE, TOKENS, VERIFIED_ACCOUNT } from './paycrest-answers.js';

const PAYCREST = { name: 'paycrest', label: 'The offramp provider', credentialsHint: 'PAYCREST_API_KEY' };

export interface PaycrestConfig {
  apiKey: string;
  /** Verifies Paycrest's webhooks; never sent. */
  apiSecret: string;
  baseUrl: string;
  timeoutMs?: number;
}

/** Seed values Paycrest does not serve (its docs list neither), refused before any call. */
const UNSERVED_NETWORKS: readonly OfframpNetwork[] = ['optimism', 'scroll'];
const UNSERVED_FIATS: readonly FiatCurrency[] = ['USD'];

/** Paycrest's order statuses as the gateway's; statuses that are not a change for the partner are absent. */
const STATUS_OF: Record<string, OfframpStatus> = {
  initiated: 'initiated',
  deposited: 'deposit_received',
  pending: 'processing',
  fulfilling: 'processing',
  fulfilled: 'processing',
  validated: 'fiat_sent',
  settling: 'fiat_sent',
  settled: 'completed',
  refunding: 'processing',
  refunded: 'refunded',
  expired: 'expired',
  cancelled: 'failed',
};

/** The gateway status a Paycrest status means, or undefined for one that changes nothing. */
export const paycrestStatus = (status: string): OfframpStatus | undefined => STATUS_OF[status];

/** Paycrest's webhook signature check: hex HMAC-SHA-256 of the raw body with the API secret. */
export function verifyPaycrestSignature(
  rawBody: Buffer | string,
  header: string | undefined,
  apiSecret: string,
): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', apiSecret).update(rawBody).digest('hex');
  const given = Buffer.from(header.trim().toLowerCase(), 'utf8');
  const wanted = Buffer.from(expected, 'utf8');
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

interface Envelope {
  status: string;
  message: string;
  data: unknown;
}

/**
 * Paycrest's Sender API (v1), per its OpenAPI document: every success's data checked against its
 * documented shape (paycrest-answers.ts).
 */
export class PaycrestProvider implements OfframpProvider {
  readonly name = 'paycrest';
  constructor(private readonly config: PaycrestConfig) {}

  async assets(): Promise<OfframpAsset[]> {
    const tokens = await this.call('GET', '/v1/tokens', TOKENS);
    return tokens.flatMap((t) => {
      const token = t.symbol.toUpperCase() as OfframpToken;
      const network = t.network as OfframpNetwork;
      // Only what the API can name: Paycrest also serves celo and tron, which the seed's enums lack.
      if (!OFFRAMP_TOKENS.includes(token) || !OFFRAMP_NETWORKS.includes(network)) return [];
      return [{ token, network, contractAddress: t.contractAddress, decimals: t.decimals }];
    });
  }

  async rate({
    token,
    network,
    amount,
    fiat,
  }: {
    token: OfframpToken;
    network: OfframpNetwork;
    amount: string;
    fiat: FiatCurrency;
  }): Promise<string> {
    this.checkServed(network, fiat);
    const rate = await this.call(
      'GET',
      `/v1/rates/${encodeURIComponent(token)}/${encodeURIComponent(amount)}/${encodeURIComponent(fiat)}?network=${encodeURIComponent(network)}`,
      RATE,
    );
    // The OpenAPI document says number; the Go server encodes decimals as strings. Both are read,
    // and a rate that is no plain positive decimal (negative, 1e-7) is an answer not in its shape.
    return readAnswerPart({ upstream: PAYCREST, mutating: false }, '/data', () => {
      const text = String(rate);
      if (!/^\d+(\.\d+)?$/.test(text)) throw new RangeError('not a rate');
      return text;
    });
  }

  async institutions(fiat: FiatCurrency): Promise<PayoutInstitution[]> {
    this.checkServed(undefined, fiat);
    const institutions = await this.call('GET', `/v1/institutions/${encodeURIComponent(fiat)}`, INSTITUTIONS);
    return institutions.map(({ code, name, type }) => ({ code, name, type }));
  }

  async verifyAccount(account: { institution: string; accountIdentifier: string }): Promise<string | null> {
    const name = await this.call('POST', '/v1/verify-account', VERIFIED_ACCOUNT, account);
    return name === 'OK' ? null : name;
  }

  async createOrder(order: ProviderOrderRequest): Promise<ProviderOrder> {
    this.checkServed(order.network, order.recipient.currency);
    const created = await this.call('POST', '/v1/sender/orders', CREATED_ORDER, {
      amount: Number(order.amount),
      token: order.token,
      rate: Number(order.rate),
      network: order.network,
      recipient: order.recipient,
      reference: order.reference,
      ...(order.refundAddress ? { returnAddress: order.refundAddress } : {}),
    });
    return {
      providerOrderId: created.id,
      receiveAddress: created.receiveAddress,
      validUntil: new Date(created.validUntil),
      senderFee: String(created.senderFee),
      transactionFee: String(created.transactionFee),
    };
  }

  async orderState(providerOrderId: string): Promise<ProviderOrderState> {
    const order = await this.call('GET', `/v1/sender/orders/${encodeURIComponent(providerOrderId)}`, ORDER);
    const status = paycrestStatus(order.status);
    if (!status)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `The offramp provider reported an unknown order status ${JSON.stringify(order.status)}.`,
      );
    return { status, ...(order.txHash ? { txHash: order.txHash } : {}) };
  }

  /**
   * Reconciliation: `GET /v1/sender/orders?page=&pageSize=` (`{total, page, pageSize, orders}`,
   * newest first), until the last page or a page wholly older than the window. Amounts are decimal
   * token units, turned into base units with the token's decimals from `/v1/tokens`.
   */
  async listOrders(window: ListWindow): Promise<ProviderRecord[]> {
    const assets = await this.assets();
    const decimalsOf = (token: string, network: string) =>
      assets.find((a) => a.token === token.toUpperCase() && a.network === network)?.decimals ??
      (network === 'bnb-smart-chain' ? 18 : 6);
    const records: ProviderRecord[] = [];
    const pageSize = 100;
    for (let page = 1; page <= 10_000; page++) {
      const data = await this.call(
        'GET',
        `/v1/sender/orders?ordering=desc&page=${page}&pageSize=${pageSize}`,
        ORDER_PAGE,
      );
      for (const [i, order] of data.orders.entries()) {
        const at = new Date(order.createdAt);
        if (at < window.from || at >= window.to) continue;
        records.push({
          reference: order.id,
          providerRef: order.id,
          // An amount its token cannot hold (more decimals than it has) is a row not in its shape.
          amount: readAnswerPart({ upstream: PAYCREST, mutating: false }, `/data/orders/${i}/amount`, () =>
            minorUnitsOf(order.amount, decimalsOf(order.token, order.network)),
          ),
          currency: `${order.token.toUpperCase()}@${order.network}`,
          // Through the gateway's own mapping: `settling` is fiat delivered, as the order shows it.
          status: offrampRecordStatus(paycrestStatus(order.status)),
          at,
        });
      }
      const older = data.orders.length > 0 && data.orders.every((o) => new Date(o.createdAt) < window.from);
      if (data.orders.length === 0 || older || page * pageSize >= data.total) break;
    }
    return records;
  }

  private checkServed(network: OfframpNetwork | undefined, fiat: FiatCurrency): void {
    if (network && UNSERVED_NETWORKS.includes(network)) {
      throw badInput(
        'network',
        `network ${network} is not served by the offramp provider. Served: ${OFFRAMP_NETWORKS.filter((n) => !UNSERVED_NETWORKS.includes(n)).join(', ')}.`,
      );
    }
    if (UNSERVED_FIATS.includes(fiat)) {
      throw badInput(
        'fiat',
        `fiat ${fiat}: the offramp provider does not pay out ${fiat}. Served: ${FIAT_CURRENCIES.filter((f) => !UNSERVED_FIATS.includes(f)).join(', ')}.`,
      );
    }
  }

  private call<T>(method: 'GET' | 'POST', path: string, shape: AnswerShape<T>, body?: unknown): Promise<T> {
    return requestUpstream(
      {
        upstream: PAYCREST,
        url: `${this.config.baseUrl.replace(/\/$/, '')}${path}`,
        method,
        headers: { 'API-Key': this.config.apiKey },
        body,
        timeoutMs: this.config.timeoutMs ?? 10_000,
        // An order Paycrest may have opened without answering is harmless: nothing is paid into it.
        mutating: false,
      },
      // A 2xx is Paycrest's success or its documented error; a body that is neither is not its format.
      (status, answer) => {
        const payload = answer as Envelope;
        if (status < 300 && payload.status === 'success') return { data: payload.data, at: '/data' };
        if (status < 300 && payload.status !== 'error') return { mismatch: '/status' };
        const message = payload.message ?? `HTTP ${status}`;
        const field =
          fieldOf(payload.data) ??
          (/amount/i.test(message)
            ? 'amount'
            : /fiat|currency|converted/i.test(message)
              ? 'fiat'
              : /network/i.test(message)
                ? 'network'
                : 'token');
        return { message, field };
      },
      shape,
    );
  }
}

function fieldOf(data: unknown): string | undefined {
  const first = Array.isArray(data) ? data[0] : data;
  if (first && typeof first === 'object' && typeof (first as { field?: unknown }).field === 'string') {
    const field = (first as { field: string }).field;
    return field === 'accountIdentifier' ? 'accountNumber' : field;
  }
  return undefined;
}
