import { createCipheriv, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';
import { type ListWindow, minorUnitsOf, type ProviderRecord, recordStatusOf } from '../reconciliation/records.js';
import { nairaNumber } from '../wallet/naira.js';
import type {
  Authorization,
  Bank,
  CardDetails,
  CardToken,
  ChargeState,
  ChargeStatus,
  Customer,
  NextAction,
  PayInAccount,
  PaymentsProvider,
  TransferState,
  Settlement,
} from './payments-provider.js';
import { type AnswerOf, type AnswerShape, readAnswerPart } from '../upstream/answer-shape.js';
import { requestUpstream } from '../upstream/http.js';
import { generate, UpstreamError } from '../upstream/upstream-error.js';
import {
  BANKS,
  CARD_METHOD,
  CHARGE,
  COLLECTIONS_PAGE,
  CREATED,
  PAYMENT_LINK,
  RESOLVED_ACCOUNT,
  SETTLEMENT,
  SETTLEMENTS_PAGE,
  TOKEN,
  TRANSFER,
  TRANSFERS,
  TRANSFERS_PAGE,
  VIRTUAL_ACCOUNT,
} from './flutterwave-answers.js';

const FLUTTERWAVE = {
  name: 'flutterwave',
  label: 'The payments provider',
  credentialsHint: 'FLUTTERWAVE_CLIENT_ID and FLUTTERWAVE_CLIENT_SECRET',
};

export interface FlutterwaveConfig {
  clientId: string;
  clientSecret: string;
  /** Base64 AES-256 key from the dashboard: card and PIN fields are encrypted with it. */
  encryptionKey: string;
  /** v4 API base, e.g. https://api.flutterwave.com/v4 (sandbox: https://developersandbox-api.flutterwave.com). */
  baseUrl: string;
  tokenUrl: string;
  /** v3 secret key, for hosted payment links (v3 Standard); without it links answer 503. */
  v3SecretKey?: string | undefined;
  v3BaseUrl: string;
  timeoutMs?: number;
}

interface Envelope {
  status: string;
  message?: string;
  data: unknown;
  error?: {
    type?: string;
    code?: string;
    message?: string;
    validation_errors?: Array<{ field_name: string; message: string }>;
  };
}

type FlwCharge = AnswerOf<typeof CHARGE>;

/** Flutterwave's charge statuses vary by version and SDK; anything unknown is still pending. */
function chargeStatusOf(status: string | undefined): ChargeStatus {
  const s = (status ?? '').toLowerCase();
  if (['succeeded', 'successful', 'success', 'completed'].includes(s)) return 'succeeded';
  if (['failed', 'cancelled', 'voided', 'declined'].includes(s)) return 'failed';
  return 'pending';
}

function transferStatusOf(status: string | undefined): TransferState['status'] {
  const s = (status ?? '').toLowerCase();
  if (['succeeded', 'successful', 'success', 'completed'].includes(s)) return 'succeeded';
  if (['failed', 'cancelled', 'reversed'].includes(s)) return 'failed';
  return 'pending';
}

/** Only the next actions the gateway can carry on; others are shown as an instruction. */
function nextActionOf(next: FlwCharge['next_action']): NextAction | undefined {
  if (!next) return undefined;
  // Each type's details sit beside it under its own name (`requires_otp: {note}`), read defensively.
  const action = next as { type: string } & Record<string, unknown>;
  switch (action.type) {
    case 'requires_pin':
      return { type: 'requires_pin', requires_pin: {} };
    case 'requires_otp':
      return {
        type: 'requires_otp',
        requires_otp: {
          note: String(
            (action['requires_otp'] as { note?: string } | undefined)?.note ?? 'Enter the OTP sent to the card holder.',
          ),
        },
      };
    case 'redirect_url':
      return {
        type: 'redirect_url',
        redirect_url: { url: String((action['redirect_url'] as { url?: string } | undefined)?.url ?? '') },
      };
    case 'payment_instruction':
      return {
        type: 'payment_instruction',
        payment_instruction: {
          note: String((action['payment_instruction'] as { note?: string } | undefined)?.note ?? ''),
        },
      };
    default:
      return { type: 'payment_instruction', payment_instruction: { note: `The provider asks for ${action.type}.` } };
  }
}

/**
 * Flutterwave webhook check. Sources disagree on v4's `flutterwave-signature` (base64 HMAC-SHA-256
 * of the raw body keyed with the secret hash, or the secret hash itself), and v3 sends the hash as
 * `verif-hash`: each is accepted, compared in constant time.
 */
export function verifyFlutterwaveSignature(
  rawBody: Buffer | string,
  headers: { signature?: string | undefined; verifHash?: string | undefined },
  secretHash: string,
): boolean {
  if (!secretHash) return false;
  const same = (a: string, b: string) => {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  };
  const hmac = createHmac('sha256', secretHash).update(rawBody).digest('base64');
  if (headers.signature && (same(headers.signature, hmac) || same(headers.signature, secretHash))) return true;
  return Boolean(headers.verifHash && same(headers.verifHash, secretHash));
}

/**
 * Flutterwave v4 (OAuth2 client credentials; tokens live 10 minutes) for charges, customers,
 * payment methods, virtual accounts, banks and transfers, and v3 Standard for hosted links. Every
 * answer's body is checked, not only its HTTP status: Flutterwave has answered 200 with an error.
 */
export class FlutterwaveProvider implements PaymentsProvider {
  readonly name = 'flutterwave';
  /** Flutterwave's webhooks can be lost: a pending charge is asked about after five minutes. */
  readonly pollChargesAfterMs = 5 * 60_000;
  private token: { value: string; expiresAt: number } | undefined;

  constructor(private readonly config: FlutterwaveConfig) {}

  async tokenizeCard(card: CardDetails): Promise<CardToken> {
    const nonce = randomBytes(6).toString('hex');
    const encrypt = (value: string) => this.encrypt(value, nonce);
    const method = await this.call(
      'POST',
      '/payment-methods',
      CARD_METHOD,
      {
        type: 'card',
        card: {
          nonce,
          encrypted_card_number: encrypt(card.number.replace(/[\s-]/g, '')),
          encrypted_expiry_month: encrypt(String(card.expMonth).padStart(2, '0')),
          encrypted_expiry_year: encrypt(String(card.expYear).slice(-2)),
          encrypted_cvv: encrypt(card.cvv),
        },
      },
      { fieldPrefix: 'card.', unknownOutcome: false },
    );
    return {
      token: method.id,
      brand: (method.card?.network ?? 'card').toLowerCase(),
      last4: method.card?.last4 ?? card.number.slice(-4),
      expMonth: Number(method.card?.expiry_month ?? card.expMonth),
      expYear: card.expYear,
    };
  }

  async chargeCard(charge: {
    reference: string;
    amount: bigint;
    cardToken: string;
    customer: Customer;
    redirectUrl?: string;
  }): Promise<ChargeState> {
    const customerId = await this.customerId(charge.customer);
    const created = await this.call(
      'POST',
      '/charges',
      CHARGE,
      {
        amount: nairaNumber(charge.amount),
        currency: 'NGN',
        reference: charge.reference,
        customer_id: customerId,
        payment_method_id: charge.cardToken,
        ...(charge.redirectUrl ? { redirect_url: charge.redirectUrl } : {}),
      },
      { unknownOutcome: true, idempotencyKey: charge.reference },
    );
    return this.stateOf(created);
  }

  async authorize(
    charge: { providerRef: string; step: NextAction['type'] },
    authorization: Authorization,
  ): Promise<ChargeState> {
    if (authorization.type === '3ds') return this.chargeStatus(charge.providerRef);
    const nonce = randomBytes(6).toString('hex');
    const body =
      authorization.type === 'pin'
        ? { authorization: { type: 'pin', pin: { nonce, encrypted_pin: this.encrypt(authorization.pin, nonce) } } }
        : { authorization: { type: 'otp', otp: { code: authorization.otp } } };
    return this.stateOf(
      await this.call('PUT', `/charges/${encodeURIComponent(charge.providerRef)}`, CHARGE, body, {
        unknownOutcome: true,
      }),
    );
  }

  async chargeStatus(providerRef: string): Promise<ChargeState> {
    return this.stateOf(await this.call('GET', `/charges/${encodeURIComponent(providerRef)}`, CHARGE));
  }

  async bankTransferAccount(charge: { reference: string; amount: bigint; customer: Customer }): Promise<PayInAccount> {
    const customerId = await this.customerId(charge.customer);
    const account = await this.call(
      'POST',
      '/virtual-accounts',
      VIRTUAL_ACCOUNT,
      {
        reference: charge.reference,
        customer_id: customerId,
        amount: nairaNumber(charge.amount),
        currency: 'NGN',
        account_type: 'dynamic',
        expiry: 1800,
      },
      { unknownOutcome: false, idempotencyKey: charge.reference },
    );
    return {
      providerRef: account.id,
      accountNumber: account.account_number,
      bankName: account.account_bank_name,
      accountName: charge.customer.name,
      expiresAt: account.account_expiration_datetime ? new Date(account.account_expiration_datetime) : null,
      note: account.note ?? `Transfer exactly NGN ${nairaNumber(charge.amount).toFixed(2)} to this account.`,
    };
  }

  async ussd(charge: {
    reference: string;
    amount: bigint;
    bankCode: string;
    customer: Customer;
  }): Promise<ChargeState> {
    const method = await this.call(
      'POST',
      '/payment-methods',
      CREATED,
      { type: 'ussd', ussd: { account_bank: charge.bankCode } },
      { fieldPrefix: '', unknownOutcome: false },
    );
    const customerId = await this.customerId(charge.customer);
    const created = await this.call(
      'POST',
      '/charges',
      CHARGE,
      {
        amount: nairaNumber(charge.amount),
        currency: 'NGN',
        reference: charge.reference,
        customer_id: customerId,
        payment_method_id: method.id,
      },
      { unknownOutcome: true, idempotencyKey: charge.reference },
    );
    return this.stateOf(created);
  }

  async paymentLink(charge: {
    reference: string;
    amount: bigint;
    customer: Customer;
    redirectUrl: string;
    title: string;
  }): Promise<{ providerRef: string; link: string }> {
    if (!this.config.v3SecretKey)
      throw new DomainError('SERVICE_UNAVAILABLE', 'Hosted payment links need FLUTTERWAVE_V3_SECRET_KEY.');
    const data = await this.v3('POST', '/payments', PAYMENT_LINK, {
      tx_ref: charge.reference,
      amount: nairaNumber(charge.amount),
      currency: 'NGN',
      redirect_url: charge.redirectUrl,
      customer: { email: charge.customer.email, phonenumber: charge.customer.phoneNumber, name: charge.customer.name },
      customizations: { title: charge.title },
    });
    return { providerRef: charge.reference, link: data.link };
  }

  async permanentAccount(owner: { reference: string; customer: Customer }): Promise<PayInAccount> {
    const customerId = await this.customerId(owner.customer);
    const account = await this.call(
      'POST',
      '/virtual-accounts',
      VIRTUAL_ACCOUNT,
      { reference: owner.reference, customer_id: customerId, amount: 0, currency: 'NGN', account_type: 'static' },
      { unknownOutcome: false, idempotencyKey: owner.reference },
    );
    return {
      providerRef: account.id,
      accountNumber: account.account_number,
      bankName: account.account_bank_name,
      accountName: owner.customer.name,
      expiresAt: null,
      note: account.note ?? '',
    };
  }

  async banks(): Promise<Bank[]> {
    const banks = await this.call('GET', '/banks?country=NG', BANKS);
    return banks.map((b) => ({ code: b.code, name: b.name }));
  }

  async resolveAccount({ bankCode, accountNumber }: { bankCode: string; accountNumber: string }): Promise<string> {
    const resolved = await this.call(
      'POST',
      '/banks/account-resolve',
      RESOLVED_ACCOUNT,
      { account: { code: bankCode, number: accountNumber }, currency: 'NGN' },
      { fieldPrefix: '', unknownOutcome: false },
    );
    return resolved.account_name;
  }

  async transfer(transfer: {
    reference: string;
    amount: bigint;
    bankCode: string;
    accountNumber: string;
    accountName: string;
    narration: string;
  }): Promise<TransferState> {
    const created = await this.call(
      'POST',
      '/direct-transfers',
      TRANSFER,
      {
        action: 'instant',
        type: 'bank',
        reference: transfer.reference,
        narration: transfer.narration,
        payment_instruction: {
          source_currency: 'NGN',
          destination_currency: 'NGN',
          amount: { applies_to: 'destination_currency', value: nairaNumber(transfer.amount) },
          recipient: { bank: { account_number: transfer.accountNumber, code: transfer.bankCode } },
        },
      },
      { unknownOutcome: true, idempotencyKey: transfer.reference },
    );
    return { providerRef: created.id, status: transferStatusOf(created.status) };
  }

  async transferStatus(reference: string): Promise<TransferState> {
    const found = await this.call('GET', `/transfers?reference=${encodeURIComponent(reference)}`, TRANSFERS);
    const transfer = found.find((t) => t.reference === reference);
    return transfer
      ? { providerRef: transfer.id, status: transferStatusOf(transfer.status) }
      : { providerRef: null, status: 'not_found' };
  }

  /**
   * Reconciliation: v3 `GET /transactions` (every collection: cards, bank transfers, virtual
   * accounts), paged by `meta.page_info`. `tx_ref` is the reference the gateway sent.
   */
  async listCollections(window: ListWindow): Promise<ProviderRecord[]> {
    return this.v3List('/transactions', window, COLLECTIONS_PAGE, (t) => listed(t, t.tx_ref ?? String(t.id)));
  }

  /** Reconciliation: v3 `GET /transfers`, paged the same way; `reference` is the one the gateway sent. */
  async listTransfers(window: ListWindow): Promise<ProviderRecord[]> {
    return this.v3List('/transfers', window, TRANSFERS_PAGE, (t) => listed(t, t.reference ?? String(t.id)));
  }

  /**
   * Reconciliation: v3 `GET /settlements` (paged like the other lists), then `GET /settlements/:id`
   * of each for its transactions. A settlement's `net_amount` is its transactions' `charged_amount`
   * less their `app_fee`, `merchant_fee` and `stampduty_charge`, less the batch's `refund` and
   * `chargeback`.
   */
  async listSettlements(window: ListWindow): Promise<Settlement[]> {
    const rows = await this.v3List('/settlements', window, SETTLEMENTS_PAGE, (row) => row);
    const settlements: Settlement[] = [];
    for (const row of rows) {
      const { data: detail } = await this.request(
        `${this.config.v3BaseUrl.replace(/\/$/, '')}/settlements/${encodeURIComponent(String(row.id))}`,
        'GET',
        { authorization: `Bearer ${this.config.v3SecretKey}` },
        undefined,
        SETTLEMENT,
        { unknownOutcome: false, envelope: true },
      );
      const createdAt = new Date(detail.created_at);
      const transactions = (detail.transactions ?? []).map((t, i) =>
        readAnswerPart(READ_FAULT, `/data/transactions/${i}`, () => ({
          reference: t.tx_ref ?? String(t.id),
          providerRef: String(t.id),
          amount: minorUnitsOf(t.charged_amount),
          fee: minorUnitsOf(t.app_fee ?? 0) + minorUnitsOf(t.merchant_fee ?? 0) + minorUnitsOf(t.stampduty_charge ?? 0),
          currency: t.currency ?? detail.currency ?? 'NGN',
          status: recordStatusOf(t.status),
          at: createdAt,
        })),
      );
      settlements.push({
        id: String(detail.id),
        status: recordStatusOf(detail.status),
        currency: detail.currency ?? 'NGN',
        ...readAnswerPart(READ_FAULT, '/data', () => ({
          netAmount: minorUnitsOf(detail.net_amount),
          deductions: minorUnitsOf(detail.refund ?? 0) + minorUnitsOf(detail.chargeback ?? 0),
        })),
        createdAt,
        transactions,
      });
    }
    return settlements;
  }

  /**
   * Every page of a v3 list between the window's days (`from`/`to` are dates, so a day either side
   * is asked for and the rows outside the window dropped), each row read by `toRecord` (a row it
   * cannot read, say an amount with more decimals than naira has, is a mismatch at that row). Lists
   * come newest first: paging stops at the last page, or at a page wholly older than the window.
   */
  private async v3List<R extends { created_at: string }, Out>(
    path: string,
    window: ListWindow,
    shape: AnswerShape<{ data: R[]; meta?: { page_info?: { total_pages?: number | null } | null } | null }>,
    toRecord: (row: R) => Out,
  ): Promise<Out[]> {
    if (!this.config.v3SecretKey)
      throw new DomainError('SERVICE_UNAVAILABLE', 'Reconciliation reads v3 lists: set FLUTTERWAVE_V3_SECRET_KEY.');
    const day = (at: Date) => at.toISOString().slice(0, 10);
    const records: Out[] = [];
    for (let page = 1; page <= 10_000; page++) {
      const query = new URLSearchParams({
        from: day(new Date(window.from.getTime() - 86_400_000)),
        to: day(new Date(window.to.getTime() + 86_400_000)),
        page: String(page),
      });
      const { data, meta } = await this.request(
        `${this.config.v3BaseUrl.replace(/\/$/, '')}${path}?${query}`,
        'GET',
        { authorization: `Bearer ${this.config.v3SecretKey}` },
        undefined,
        shape,
        { unknownOutcome: false, envelope: true },
      );
      data.forEach((row, i) => {
        const at = Date.parse(row.created_at);
        if (at >= window.from.getTime() && at < window.to.getTime())
          records.push(readAnswerPart(READ_FAULT, `/data/${i}`, () => toRecord(row)));
      });
      const olderThanWindow = data.length > 0 && data.every((r) => Date.parse(r.created_at) < window.from.getTime());
      if (data.length === 0 || olderThanWindow || page >= (meta?.page_info?.total_pages ?? 1)) break;
    }
    return records;
  }

  private stateOf(charge: FlwCharge): ChargeState {
    const status = chargeStatusOf(charge.status);
    const nextAction = status === 'pending' ? nextActionOf(charge.next_action) : undefined;
    return {
      providerRef: charge.id,
      status,
      ...(nextAction ? { nextAction } : {}),
      ...(status === 'failed'
        ? { reason: `The payment failed (${charge.processor_response?.type ?? charge.status}).` }
        : {}),
    };
  }

  private async customerId(customer: Customer): Promise<string> {
    const [first, ...rest] = customer.name.split(' ');
    const created = await this.call(
      'POST',
      '/customers',
      CREATED,
      {
        email: customer.email,
        name: { first: first ?? customer.name, last: rest.join(' ') || first },
        ...(customer.phoneNumber
          ? { phone: { country_code: '234', number: customer.phoneNumber.replace(/^\+?234/, '') } }
          : {}),
      },
      { unknownOutcome: false, idempotencyKey: `cus-${customer.email}` },
    );
    return created.id;
  }

  /** AES-256-GCM with the dashboard key and the request's 12-character nonce; ciphertext and tag, base64. */
  private encrypt(value: string, nonce: string): string {
    const cipher = createCipheriv(
      'aes-256-gcm',
      Buffer.from(this.config.encryptionKey, 'base64'),
      Buffer.from(nonce, 'utf8'),
    );
    return Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64');
  }

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now() + 60_000) return this.token.value;
    const body = await requestUpstream(
      {
        upstream: FLUTTERWAVE,
        url: this.config.tokenUrl,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: this.config.clientId,
          client_secret: this.config.clientSecret,
          grant_type: 'client_credentials',
        }),
        timeoutMs: this.config.timeoutMs ?? 10_000,
        mutating: false,
      },
      // A 2xx is the token (a 2xx without one is a fault, not a refusal); anything else refused us.
      (status, answer) => (status < 300 ? { data: answer } : { message: 'no access token' }),
      TOKEN,
    ).catch((error: unknown) => {
      if (error instanceof UpstreamError && error.kind === 'refused')
        throw generate({ upstream: FLUTTERWAVE, mutating: false, httpStatus: 401 });
      throw error;
    });
    this.token = { value: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 600) * 1000 };
    return this.token.value;
  }

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    shape: AnswerShape<T>,
    body?: unknown,
    options: { unknownOutcome?: boolean; idempotencyKey?: string; fieldPrefix?: string } = {},
  ): Promise<T> {
    const token = await this.accessToken();
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'x-trace-id': randomUUID() };
    if (options.idempotencyKey) headers['x-idempotency-key'] = options.idempotencyKey;
    return this.request(`${this.config.baseUrl.replace(/\/$/, '')}${path}`, method, headers, body, shape, options);
  }

  private v3<T>(method: 'POST', path: string, shape: AnswerShape<T>, body: unknown): Promise<T> {
    return this.request(
      `${this.config.v3BaseUrl.replace(/\/$/, '')}${path}`,
      method,
      { authorization: `Bearer ${this.config.v3SecretKey}` },
      body,
      shape,
      { unknownOutcome: false },
    );
  }

  /**
   * One call, its answer read from Flutterwave's envelope: the `data` of a success (or the whole
   * envelope, for the paged v3 lists), checked against `shape`.
   */
  private async request<T>(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: unknown,
    shape: AnswerShape<T>,
    options: { unknownOutcome?: boolean; fieldPrefix?: string; envelope?: boolean },
  ): Promise<T> {
    try {
      return await requestUpstream(
        {
          upstream: FLUTTERWAVE,
          url,
          method,
          headers,
          body,
          timeoutMs: this.config.timeoutMs ?? 10_000,
          mutating: options.unknownOutcome ?? false,
        },
        // Success needs both a 2xx and a success body: a 200 carrying `status: "error"` (v3) or
        // `"failed"` (v4) is a refusal, and a 200 carrying neither is not Flutterwave's format.
        (status, answer) => {
          const payload = answer as Envelope;
          if (status < 300 && payload.status === 'success')
            return options.envelope ? { data: payload } : { data: payload.data, at: '/data' };
          if (status < 300 && payload.status !== 'error' && payload.status !== 'failed') return { mismatch: '/status' };
          const problem = payload.error?.validation_errors?.[0];
          return {
            message:
              problem?.message ??
              payload.error?.message ??
              payload.message ??
              'The payments provider refused the request.',
            field: problem ? `${options.fieldPrefix ?? ''}${camel(problem.field_name)}` : 'request',
          };
        },
        shape,
      );
    } catch (error) {
      // A refused token is fetched afresh next time.
      if (error instanceof UpstreamError && (error.httpStatus === 401 || error.httpStatus === 403))
        this.token = undefined;
      throw error;
    }
  }
}

/** A reconciliation read that cannot be read: the same fault as a list answer not in its shape. */
const READ_FAULT = { upstream: FLUTTERWAVE, mutating: false };

/** The fields of a v3 list row that reconciliation reads. */
type FlwListed = AnswerOf<typeof COLLECTIONS_PAGE>['data'][number];

const listed = (row: Omit<FlwListed, 'tx_ref'>, reference: string): ProviderRecord => ({
  reference,
  providerRef: String(row.id),
  amount: minorUnitsOf(row.amount),
  currency: row.currency ?? 'NGN',
  status: recordStatusOf(row.status),
  at: new Date(row.created_at),
});

const camel = (name: string) =>
  name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()).replace(/^account(Bank)?$/, 'bankCode');
