import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalHttpServer } from '../helpers/local-server.js';

/**
 * A REST v1 deployment written from the spec alone (partner-gateway-api.md): only its paths, its
 * envelope, its user resource and its error bodies, nothing of this gateway's code. It misbehaves
 * on command, for every request until told otherwise:
 * - `timeout`: reads the request and never answers;
 * - `slow`: holds each answer until `release()`;
 * - `server-error`: 500 in the general error body;
 * - `rate-limit`: 429 with `Retry-After: 7` and the rate-limit body;
 * - `unauthorized`, `forbidden`, `not-found`: 401, 403, 404 in the general error body;
 * - `wrong-shape`: 200 whose `data` is not the spec's resource (a user whose id is a number and
 *   has no email; a bill record whose amount is a string; a validation result with nothing in it).
 *
 * Bills follow the spec's Endpoints: the payment bodies take only the fields it lists (any other is
 * refused 400, as a NestJS service that forbids unknown properties does), their answers are the bill
 * record without updatedAt, deletedDate and providerData, and the amount is echoed as the JSON
 * number it came as. The spec names the records list's query parameters by meaning only: this fake
 * reads `page`, `limit` and `status`, the names a Partner Gateway uses. The deposit with a payment
 * method takes only the body fields the spec lists and answers the spec's deposit result; the token
 * transfer and the swap take only theirs and answer a fresh signature (and the swap's txUrl); the
 * customer creation takes its four fields and answers as a Partner Gateway does (the spec shows none).
 */
export type Misbehaviour =
  | 'timeout'
  | 'slow'
  | 'server-error'
  | 'rate-limit'
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'wrong-shape';

/** The spec's user resource, every field as it lists them. */
export interface SpecUser {
  id: string;
  createdAt: string;
  updatedAt: string;
  deletedDate: string;
  email: string;
  phone: string;
  firstName: string;
  lastName: string;
  name: string;
  haveTransactionPin: boolean;
  verified: boolean;
  resetToken: string;
  resetTokenExpiry: number;
  dob: string;
  isAdmin: boolean;
  deviceId: string;
  deviceIp: string;
  deviceModel: string;
  platform: string;
  lastLoggedIn: string;
}

/** Every user's wallet address here: the spec's `data.address` of `GET /api/v1/solana/address`. */
export const SOLANA_ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

/** The spec's paths (Endpoints), as patterns over the path without its query. */
const SPEC_PATHS: Array<[string, RegExp]> = [
  ['GET', /^\/api\/v1$/],
  ['GET', /^\/api\/v1\/user\/me$/],
  ['POST', /^\/api\/v1\/wallet\/deposit\/payment-method$/],
  ['POST', /^\/api\/v1\/bills\/pay\/(electricity|airtime)$/],
  ['POST', /^\/api\/v1\/bills\/(buy-airtime|validate)$/],
  ['GET', /^\/api\/v1\/bills\/records$/],
  ['GET', /^\/api\/v1\/bills\/records\/reference\/[^/]+$/],
  ['GET', /^\/api\/v1\/solana-exchange\/quote\/token-to-(sol|token)$/],
  ['POST', /^\/api\/v1\/solana-exchange\/swap-token-to-sol$/],
  ['POST', /^\/api\/v1\/solana\/transfer-token$/],
  ['GET', /^\/api\/v1\/solana\/address$/],
  ['GET', /^\/api\/v1\/offramp\/exchange\/(quote|assets)$/],
  ['POST', /^\/api\/v1\/customers\/[^/]+$/],
];

const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
};

/** The body fields each bill request of the spec takes, and which of them it requires. */
const BILL_BODIES: Record<string, { fields: string[]; required: string[] }> = {
  '/api/v1/bills/pay/electricity': {
    fields: ['meterNumber', 'amount', 'disco', 'isSchedule', 'saveBeneficiary', 'beneficiaryName'],
    required: [],
  },
  '/api/v1/bills/pay/airtime': {
    fields: ['phoneNumber', 'biller', 'amount', 'isSchedule', 'saveBeneficiary', 'beneficiaryName'],
    required: [],
  },
  '/api/v1/bills/buy-airtime': {
    fields: ['phoneNumber', 'biller', 'amount', 'isSchedule', 'scheduleData', 'saveBeneficiary', 'beneficiaryName'],
    required: ['phoneNumber', 'biller', 'amount'],
  },
  '/api/v1/bills/validate': {
    fields: ['customer', 'billerCode', 'itemCode'],
    required: ['customer', 'billerCode', 'itemCode'],
  },
};

/** The spec's bill transaction record, as the list and the lookup give it. */
export interface SpecBillRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  deletedDate: string | null;
  userId: string;
  reference: string;
  billerCode: string;
  itemCode: string;
  customer: string;
  amount: number;
  type: 'AIRTIME' | 'MOBILEDATA' | 'CABLEBILLS' | 'UTILITYBILLS';
  status: 'PENDING' | 'SUCCESS' | 'FAILED';
  providerData: string;
  txRef: string;
  billerName: string;
  validityPeriod: string | null;
  metadata: string | null;
  token: string | null;
  units: string | null;
}

/** A request as the fake received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  query: string;
  body: string;
  headers: IncomingMessage['headers'];
}

export class SpecUpstream extends LocalHttpServer {
  misbehaviour: Misbehaviour | undefined;
  /** When set, only requests to this path (query left out) misbehave; the rest are answered well. */
  misbehavingPath: string | undefined;
  /** Requests received, by path (query left out). */
  readonly received: string[] = [];
  /** Requests received, whole. */
  readonly requests: ReceivedRequest[] = [];
  /** Every user's bill records, in the order they were made. */
  readonly bills: SpecBillRecord[] = [];
  /** The X-Forwarded-For of each request, in the same order. */
  readonly forwardedFor: Array<string | undefined> = [];
  private readonly users = new Map<string, SpecUser>();
  private readonly held: Array<() => void> = [];
  private readonly hanging = new Set<ServerResponse>();

  /** A user and a fresh API key for it. */
  addUser(overrides: Partial<SpecUser> = {}): { key: string; user: SpecUser } {
    const key = `sk_live_${randomUUID().replaceAll('-', '')}`;
    const user: SpecUser = {
      id: randomUUID(),
      createdAt: '2026-01-05T09:30:00.000Z',
      updatedAt: '2026-02-01T12:00:00.000Z',
      deletedDate: '2026-03-01T00:00:00.000Z',
      email: 'chioma@example.ng',
      phone: '+2348031234567',
      firstName: 'Chioma',
      lastName: 'Eze',
      name: 'Chioma N. Eze',
      haveTransactionPin: true,
      verified: true,
      resetToken: 'reset-secret-never-shown',
      resetTokenExpiry: 1767225600,
      dob: '1994-04-12',
      isAdmin: false,
      deviceId: 'dev-1',
      deviceIp: '102.89.1.2',
      deviceModel: 'Pixel 8',
      platform: 'android',
      lastLoggedIn: '2026-02-01T11:59:00.000Z',
      ...overrides,
    };
    this.users.set(key, user);
    return { key, user };
  }

  /** A bill record of the user's, as a payment would have left it. */
  addBill(user: SpecUser, overrides: Partial<SpecBillRecord> = {}): SpecBillRecord {
    const now = new Date().toISOString();
    const record: SpecBillRecord = {
      id: randomUUID(),
      createdAt: now,
      updatedAt: now,
      deletedDate: null,
      userId: user.id,
      reference: `BILL-${randomUUID()}`,
      billerCode: 'MTN',
      itemCode: 'MTN-ITEM',
      customer: '08031234567',
      amount: 100,
      type: 'AIRTIME',
      status: 'SUCCESS',
      providerData: JSON.stringify({ provider: 'spec-fake', biller: 'MTN' }),
      txRef: `TX-${randomUUID().slice(0, 8)}`,
      billerName: 'MTN Airtime',
      validityPeriod: null,
      metadata: null,
      token: null,
      units: null,
      ...overrides,
    };
    this.bills.push(record);
    return record;
  }

  /**
   * Answers a test gives to this gateway's own paths, where the route map's `gateway` setting
   * places the operations the spec only names (`/api/v1/evm/base/balance` → its JSON body): 200
   * to a known key; a path not here is not the spec's, so 404.
   */
  readonly gatewayAnswers = new Map<string, unknown>();

  /** Solana transfer and swap bodies received (parsed), in order, with the signature answered. */
  readonly solanaSends: Array<{ body: Record<string, unknown>; signature: string }> = [];

  /** Deposit results answered, in order. */
  readonly deposits: Array<Record<string, unknown>> = [];

  /** Answers held by `slow`, waiting. */
  get waiting(): number {
    return this.held.length;
  }

  release(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  override async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    await super.stop();
  }

  protected handle(req: IncomingMessage, res: ServerResponse): void {
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    this.received.push(path);
    this.forwardedFor.push(req.headers['x-forwarded-for'] as string | undefined);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      this.requests.push({ method: req.method ?? '', path, query, body, headers: req.headers });
      const misbehaviour =
        this.misbehavingPath === undefined || this.misbehavingPath === path ? this.misbehaviour : undefined;
      if (misbehaviour === 'timeout') {
        this.hanging.add(res);
        return;
      }
      const answer = () => this.answer(req, res, path, query, body, misbehaviour);
      if (misbehaviour === 'slow') this.held.push(answer);
      else answer();
    });
  }

  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    body: string,
    misbehaviour: Misbehaviour | undefined,
  ): void {
    const gatewayAnswer = this.gatewayAnswers.get(path);
    if (gatewayAnswer !== undefined) {
      const known = typeof req.headers['x-api-key'] === 'string' && this.users.has(req.headers['x-api-key']);
      return known ? send(res, 200, gatewayAnswer) : general(res, 401, 'Invalid API key');
    }
    if (!SPEC_PATHS.some(([method, pattern]) => method === req.method && pattern.test(path)))
      return general(res, 404, `Cannot ${req.method} ${path}`);
    switch (misbehaviour) {
      case 'server-error':
        return general(res, 500, 'Internal server error');
      case 'rate-limit':
        return send(
          res,
          429,
          { statusCode: 429, message: 'ThrottlerException: Too Many Requests', retryAfter: 7 },
          {
            'retry-after': '7',
          },
        );
      case 'unauthorized':
        return general(res, 401, 'Invalid API key');
      case 'forbidden':
        return general(res, 403, 'Insufficient permissions');
      case 'not-found':
        return general(res, 404, 'User not found');
      default:
    }
    const key = req.headers['x-api-key'];
    const user = typeof key === 'string' ? this.users.get(key) : undefined;
    if (!user) return general(res, 401, 'Invalid API key');
    if (path === '/api/v1/user/me') {
      const data = misbehaviour === 'wrong-shape' ? { id: 42, firstName: user.firstName } : user;
      return send(res, 200, { statusCode: 200, message: 'User retrieved successfully', data, errors: {} });
    }
    if (path === '/api/v1/solana/address')
      return envelope(res, 200, 'Wallet address retrieved', {
        address: misbehaviour === 'wrong-shape' ? 42 : SOLANA_ADDRESS,
      });
    if (path === '/api/v1/offramp/exchange/quote') return offrampQuote(res, new URLSearchParams(query), misbehaviour);
    if (path === '/api/v1/solana-exchange/quote/token-to-token')
      return swapQuote(res, new URLSearchParams(query), misbehaviour);
    if (path === '/api/v1/offramp/exchange/assets')
      return envelope(res, 200, 'Assets retrieved', misbehaviour === 'wrong-shape' ? { USDT: 'base' } : OFFRAMP_ASSETS);
    if (path.startsWith('/api/v1/bills/records/reference/')) {
      const reference = decodeURIComponent(path.split('/').at(-1)!);
      const record = this.bills.find((b) => b.userId === user.id && b.reference === reference);
      if (!record)
        return send(res, 404, { success: false, message: 'Bill not found', errorCode: 'BILL_NOT_FOUND', reference });
      return envelope(res, 200, 'Bill record retrieved', shaped(record, misbehaviour));
    }
    if (path === '/api/v1/bills/records') return this.records(res, user, new URLSearchParams(query), misbehaviour);
    if (BILL_BODIES[path]) return this.billRequest(res, user, path, body, misbehaviour);
    if (path === '/api/v1/wallet/deposit/payment-method') return this.deposit(res, user, body, misbehaviour);
    if (path.startsWith('/api/v1/customers/')) return this.customer(res, path, body, misbehaviour);
    if (path === '/api/v1/solana/transfer-token')
      return this.solanaSend(res, body, TRANSFER_FIELDS, misbehaviour, (signature) => ({ signature }));
    if (path === '/api/v1/solana-exchange/swap-token-to-sol')
      return this.solanaSend(res, body, SWAP_FIELDS, misbehaviour, (signature) => ({
        signature,
        txUrl: `https://explorer.solana.com/tx/${signature}`,
      }));
    send(res, 200, { statusCode: 200, message: 'OK', data: {}, errors: {} });
  }

  private records(
    res: ServerResponse,
    user: SpecUser,
    query: URLSearchParams,
    misbehaviour: Misbehaviour | undefined,
  ): void {
    const page = Number(query.get('page') ?? 1);
    const limit = Number(query.get('limit') ?? 10);
    const status = query.get('status');
    const mine = this.bills
      .filter((b) => b.userId === user.id && (!status || b.status === status))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const totalPages = Math.ceil(mine.length / limit);
    envelope(res, 200, 'Bill records retrieved', {
      bills: mine.slice((page - 1) * limit, page * limit).map((b) => shaped(b, misbehaviour)),
      page,
      limit,
      total: mine.length,
      totalPages,
      hasNext: page < totalPages,
      hasPrev: page > 1,
    });
  }

  private billRequest(
    res: ServerResponse,
    user: SpecUser,
    path: string,
    text: string,
    misbehaviour: Misbehaviour | undefined,
  ): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return general(res, 400, 'Unexpected token in JSON');
    }
    const { fields, required } = BILL_BODIES[path]!;
    const unknown = Object.keys(body).find((field) => !fields.includes(field));
    if (unknown) return general(res, 400, `property ${unknown} should not exist`);
    const missing = required.find((field) => body[field] === undefined);
    if (missing) return general(res, 400, `${missing} should not be empty`);
    if (path === '/api/v1/bills/validate') {
      const data =
        misbehaviour === 'wrong-shape'
          ? {}
          : {
              customerName: 'ADEBAYO OKON',
              customer: body['customer'],
              billerCode: body['billerCode'],
              itemCode: body['itemCode'],
              minimum: 500,
              maximum: 100000.5,
              address: '12 Allen Avenue, Ikeja',
            };
      return envelope(res, 200, 'Customer validated', data);
    }
    const electricity = path === '/api/v1/bills/pay/electricity';
    const biller = String(electricity ? body['disco'] : body['biller']);
    const record = this.addBill(user, {
      billerCode: biller,
      itemCode: `${biller}-ITEM`,
      customer: String(electricity ? body['meterNumber'] : body['phoneNumber']),
      amount: body['amount'] as number,
      type: electricity ? 'UTILITYBILLS' : 'AIRTIME',
      providerData: JSON.stringify({ provider: 'spec-fake', biller }),
      billerName: electricity ? `${biller} Prepaid` : `${biller} Airtime`,
      token: electricity ? '1234-5678-9012-3456' : null,
      units: electricity ? '12.5 kWh' : null,
    });
    // The payment answers are the record without updatedAt, deletedDate and providerData.
    const { updatedAt: _u, deletedDate: _d, providerData: _p, ...answer } = shaped(record, misbehaviour);
    envelope(res, 201, 'Bill payment processed', answer);
  }

  /**
   * The spec's deposit with a payment method: its deposit result, `PENDING`, waiting for the card's
   * PIN (the spec's `nextAction.type`). Under `wrong-shape`, its amount is a string.
   */
  private deposit(res: ServerResponse, user: SpecUser, text: string, misbehaviour: Misbehaviour | undefined): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return general(res, 400, 'Unexpected token in JSON');
    }
    const unknown = Object.keys(body).find((field) => !DEPOSIT_FIELDS.includes(field));
    if (unknown) return general(res, 400, `property ${unknown} should not exist`);
    const result = {
      amount: misbehaviour === 'wrong-shape' ? String(body['amount']) : body['amount'],
      reference: (body['reference'] as string | undefined) ?? `DEP-${randomUUID()}`,
      currency: 'NGN',
      customization: { title: 'Wallet funding' },
      customer: { email: user.email, phoneNumber: user.phone, name: user.name },
      expiry_datetime: '2026-12-31T23:00:00.000Z',
      note: 'Enter your card PIN',
      status: 'PENDING',
      redirectUrl: (body['redirectUrl'] as string | undefined) ?? 'https://example.ng/return',
      narration: (body['narration'] as string | undefined) ?? 'Wallet funding',
      nextAction: { type: 'requires_pin', redirect_url: {}, payment_instruction: {} },
    };
    this.deposits.push(result);
    envelope(res, 201, 'Deposit initiated', result);
  }

  /**
   * The spec's customer creation: only its four body fields. The spec shows no answer: this one is
   * a Partner Gateway's (the customer in the envelope). Under `wrong-shape`, the id is a number.
   */
  private customer(res: ServerResponse, path: string, text: string, misbehaviour: Misbehaviour | undefined): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return general(res, 400, 'Unexpected token in JSON');
    }
    const unknown = Object.keys(body).find((field) => !['name', 'phone', 'email', 'externalRef'].includes(field));
    if (unknown) return general(res, 400, `property ${unknown} should not exist`);
    const now = new Date().toISOString();
    envelope(res, 201, 'Customer created', {
      id: misbehaviour === 'wrong-shape' ? 42 : randomUUID(),
      businessId: decodeURIComponent(path.split('/').at(-1)!),
      name: body['name'],
      phone: body['phone'] ?? null,
      email: body['email'] ?? null,
      externalRef: body['externalRef'] ?? null,
      status: 'active',
      createdAt: now,
      updatedAt: now,
    });
  }

  /**
   * The spec's token transfer and swap: only the body fields it lists; the answer's `data` is the
   * signature (and the swap's txUrl). Under `wrong-shape`, the signature is a number.
   */
  private solanaSend(
    res: ServerResponse,
    text: string,
    fields: string[],
    misbehaviour: Misbehaviour | undefined,
    data: (signature: string) => Record<string, unknown>,
  ): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return general(res, 400, 'Unexpected token in JSON');
    }
    const unknown = Object.keys(body).find((field) => !fields.includes(field));
    if (unknown) return general(res, 400, `property ${unknown} should not exist`);
    const signature = base58Signature();
    this.solanaSends.push({ body, signature });
    envelope(res, 201, 'Transaction sent', misbehaviour === 'wrong-shape' ? { signature: 42 } : data(signature));
  }
}

/** The token transfer's and the swap's body fields, as the spec lists them. */
const TRANSFER_FIELDS = ['to', 'tokenMintAddress', 'amount', 'network'];
const SWAP_FIELDS = ['outputMint', 'amount', 'slippageBps'];

/** A fresh 88-character base58 string, shaped as a transaction signature. */
function base58Signature(): string {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  return Array.from(randomBytes(88), (byte) => alphabet[byte % alphabet.length]).join('');
}

/** The deposit request's body fields, as the spec lists them (which are required: not shown). */
const DEPOSIT_FIELDS = ['amount', 'paymentMethodId', 'reference', 'currency', 'redirectUrl', 'meta', 'narration'];

/** A record as answered: under `wrong-shape`, its amount is a string. */
function shaped(record: SpecBillRecord, misbehaviour: Misbehaviour | undefined): Record<string, unknown> {
  return misbehaviour === 'wrong-shape' ? { ...record, amount: String(record.amount) } : { ...record };
}

/**
 * The spec shows no body for the assets list ("supported crypto and network pairs"): these are the
 * pairs in a Partner Gateway's envelope, with contract address and decimals.
 */
const OFFRAMP_ASSETS = [
  { token: 'USDT', network: 'base', contractAddress: '0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2', decimals: 6 },
  { token: 'USDC', network: 'polygon', contractAddress: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', decimals: 6 },
];

/** The offramp quote, not wrapped in the envelope (the spec says so); a fixed rate of 1,550.25 per token. */
function offrampQuote(res: ServerResponse, query: URLSearchParams, misbehaviour: Misbehaviour | undefined): void {
  const quote = {
    token: query.get('token'),
    amount: Number(query.get('amount')),
    network: query.get('network'),
    fiat: query.get('fiat'),
    rate: misbehaviour === 'wrong-shape' ? '1550.25' : 1550.25,
  };
  send(res, 200, quote);
}

/** The spec's swap quote for the three required query parameters; under `wrong-shape`, without its amounts. */
function swapQuote(res: ServerResponse, query: URLSearchParams, misbehaviour: Misbehaviour | undefined): void {
  const [inputMint, outputMint, amount] = ['inputMint', 'outputMint', 'amount'].map((name) => query.get(name));
  if (!inputMint || !outputMint || !amount) return general(res, 400, 'inputMint, outputMint and amount are required');
  const quote = {
    quoteId: 'q-7f3a',
    swapMode: 'ExactIn',
    fromToken: {
      address: inputMint,
      symbol: 'USDC',
      decimals: 6,
      name: 'USD Coin',
      logoUri: 'https://example.ng/usdc.png',
    },
    toToken: { address: outputMint, symbol: 'BONK', decimals: 5, name: 'Bonk' },
    amounts: {
      inputAmount: amount,
      outputAmount: '41000.5',
      minOutputAmount: '40795.49',
      inputAmountRaw: '1500000',
      outputAmountRaw: '4100050000',
    },
    rates: { rate: '27333.66', reverseRate: '0.0000365', usdRate: '1' },
    fees: {
      protocolFeePercent: '0.25',
      protocolFeeAmount: '0.00375',
      platformFeePercent: '0',
      totalFeePercent: '0.25',
      totalFeeAmount: '0.00375',
      gasFee: '0.000005',
      totalCost: '0.003755',
    },
    route: { hops: 2, dexes: ['Orca', 'Raydium'], tokens: [inputMint, outputMint], efficiencyScore: 93 },
    priceImpact: '0.12',
    usdValues: { inputValue: 1.5, outputValue: 1.49, netValue: 1.49 },
    slippageTolerance: '0.5',
    expiryTimestamp: 1796000000,
    expiresIn: 30,
    estimatedSwapTime: 12,
    network: 'mainnet-beta',
    executable: true,
    warnings: [],
  };
  const { amounts: _a, ...withoutAmounts } = quote;
  envelope(res, 200, 'Quote retrieved', misbehaviour === 'wrong-shape' ? withoutAmounts : quote);
}

function envelope(res: ServerResponse, status: number, message: string, data: unknown): void {
  send(res, status, { statusCode: status, message, data, errors: {} });
}

function general(res: ServerResponse, status: number, message: string): void {
  send(res, status, { statusCode: status, message, error: STATUS_NAMES[status] ?? 'Error' });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
