/**
 * Records the examples of the OpenAPI document (src/rest/openapi-examples.json): starts a sandbox
 * gateway on a free local port with an empty in-memory database, makes one user with a Full Access
 * sandbox key, and calls every REST v1 operation over HTTP once, in an order where each finds what
 * it needs (a deposit before its authorization, a bill before its receipt…), plus one call for
 * each error response the document describes that a sandbox can show. Each request and answer is
 * kept with ids (UUIDs), times, dates, keys and secrets normalised, so a new recording differs from
 * the last only where the API did. test/rest/openapi-examples.test.ts validates every example
 * against the schemas of the document.
 *
 *   npm run openapi:examples
 *
 * It fails, writing nothing, when an operation does not answer its success status or when an
 * operation of the route table was not called.
 */
import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { stampRound } from '../../src/domain/events/relay.js';
import type { RecordedExamples, RecordedExchange } from '../../src/rest/openapi-document.js';
import { operationIdOf, type RestRoute } from '../../src/rest/route.js';
import { restV1Routes } from '../../src/rest/v1/index.js';
import { createServices } from '../../src/services.js';

/** Where the examples go; OPENAPI_EXAMPLES_OUT elsewhere (the test that runs this command writes beside it). */
const OUTPUT =
  process.env.OPENAPI_EXAMPLES_OUT ?? fileURLToPath(new URL('../../src/rest/openapi-examples.json', import.meta.url));

const routes = new Map(restV1Routes.map((route) => [operationIdOf(route), route]));
const successOf = (route: RestRoute) => route.status ?? (route.method === 'POST' ? 201 : 200);

interface Call {
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  body?: unknown;
  idempotent?: boolean;
  /** The key to call with; default the Full Access one; null for none. */
  key?: string | null;
  /** The status expected; default the route's success status. */
  status?: number;
  /** Keep as the operation's example (default) or only use the answer. */
  record?: boolean;
  /** Take whatever status comes back. */
  anyStatus?: boolean;
}

const config = loadConfig(
  {},
  {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SEED_DEMO: false,
    WORKERS: false,
    RATE_LIMIT_PER_MINUTE: 100_000,
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: 4,
  },
);
const database = await openDatabase({ pgliteDataDir: 'memory://' });
const services = createServices(config, database.db, systemClock, () => undefined);
const app = await buildApp({ services, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

const user = await services.users.createUser({
  email: 'ada@partner.example',
  firstName: 'Ada',
  lastName: 'Obi',
  phone: '+2348030000000',
});
const other = await services.users.createUser({
  email: 'tunde@partner.example',
  firstName: 'Tunde',
  lastName: 'Bello',
});
const keyOf = async (userId: string, permission: 'FULL_ACCESS' | 'READ_ONLY') =>
  (await services.apiKeys.create({ userId, name: `examples ${permission}`, environment: 'sandbox', permission })).key;
const KEY = await keyOf(user.id, 'FULL_ACCESS');
const READ_ONLY_KEY = await keyOf(user.id, 'READ_ONLY');
const OTHER_KEY = await keyOf(other.id, 'FULL_ACCESS');
const business = await services.users.createBusiness(user.id, 'Ada Stores');

const operations: Record<string, RecordedExchange> = {};
const errors: Record<string, RecordedExchange> = {};

async function send(
  operationId: string,
  call: Call,
): Promise<{ status: number; body: any; exchange: RecordedExchange }> {
  const route = routes.get(operationId);
  if (!route) throw new Error(`No operation ${operationId}.`);
  const path = route.path.replace(/:(\w+)/g, (_m, name: string) => {
    const value = call.params?.[name];
    if (value === undefined) throw new Error(`${operationId}: no value for path parameter ${name}.`);
    return encodeURIComponent(value);
  });
  const query = new URLSearchParams(
    Object.entries(call.query ?? {}).map(([k, v]) => [k, String(v)] as [string, string]),
  ).toString();
  const headers: Record<string, string> = {};
  const key = call.key === undefined ? KEY : call.key;
  if (key) headers['x-api-key'] = key;
  if (call.idempotent) headers['idempotency-key'] = randomUUID();
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${path}${query ? `?${query}` : ''}`, {
    method: route.method,
    headers,
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
  });
  const text = await response.text();
  const body = (response.headers.get('content-type') ?? '').includes('application/json') ? JSON.parse(text) : text;
  const expected = call.status ?? successOf(route);
  if (!call.anyStatus && response.status !== expected)
    throw new Error(`${operationId}: expected ${expected}, got ${response.status}: ${text.slice(0, 500)}`);
  const exchange: RecordedExchange = {
    request: {
      ...(call.params ? { params: call.params } : {}),
      ...(call.query ? { query: call.query } : {}),
      ...(headers['idempotency-key'] ? { headers: { 'idempotency-key': headers['idempotency-key'] } } : {}),
      ...(call.body !== undefined ? { body: call.body } : {}),
    },
    response: { status: response.status, body },
  };
  return { status: response.status, body, exchange };
}

/** Calls an operation for its success answer, kept as its example unless `record` is false; returns `data`. */
async function call(operationId: string, options: Call = {}): Promise<any> {
  const { body, exchange } = await send(operationId, options);
  if (options.record !== false && !operations[operationId]) operations[operationId] = exchange;
  const route = routes.get(operationId)!;
  return route.envelope === false || route.html || route.csv ? body : body.data;
}

/** Calls an operation expecting an error, kept as the example of the error response `name`. */
async function fail(name: string, operationId: string, status: number, options: Call): Promise<void> {
  const { exchange } = await send(operationId, { ...options, status, record: false });
  errors[name] = exchange;
}

try {
  // The service, the account, keys.
  await call('apiInfo', { key: null });
  const me = await call('me');
  await call('user', { params: { id: me.id } });
  await call('apiKeys');
  const created = await call('createApiKey', { body: { name: 'Reporting', permission: 'Read Only' } });
  await call('revokeApiKey', { params: { id: created.apiKey.id } });

  // Test clocks first, while the account has no work queued: an advance waits for the work it makes
  // due, and this gateway runs no job runner. Deleted after, so what follows runs on the wall clock.
  const clock = await call('createTestClock', { body: { name: 'Daily airtime schedule' } });
  await call('testClocks');
  await call('testClock', { params: { id: clock.id } });
  await call('attachTestClock', { params: { id: clock.id } });
  await call('advanceTestClock', { params: { id: clock.id }, body: { seconds: 86_400 } });
  await call('detachTestClock', { params: { id: clock.id } });
  await call('deleteTestClock', { params: { id: clock.id } });

  // Webhooks.
  const endpoint = await call('createWebhookEndpoint', {
    body: {
      url: 'https://partner.example/webhooks/gateway',
      eventTypes: ['deposit.completed', 'bill.payment.successful'],
    },
  });
  const endpointId = endpoint.endpoint.id;
  await call('webhookEndpoints');
  await call('webhookEndpoint', { params: { id: endpointId } });
  await call('updateWebhookEndpoint', {
    params: { id: endpointId },
    body: { description: 'Deposits and bills', eventTypes: ['*'] },
  });
  await call('rotateWebhookSecret', { params: { id: endpointId }, body: { gracePeriodSeconds: 3600 } });
  const delivery = await call('sendTestWebhook', { params: { id: endpointId } });
  await call('webhookDeliveries', { params: { id: endpointId }, query: { limit: 10 } });
  await call('resendWebhookDelivery', { params: { id: delivery.id } });
  const spare = await call('createWebhookEndpoint', {
    body: { url: 'https://partner.example/webhooks/old' },
    record: false,
  });
  await call('deleteWebhookEndpoint', { params: { id: spare.endpoint.id } });

  // Wallet: fund it, then spend.
  await call('createVirtualAccount');
  await call('simulateVirtualAccountTransfer', { body: { amount: 50000 }, idempotent: true });
  await call('walletBalance');
  const banks = await call('banks');
  await call('resolveBankAccount', { body: { bankCode: '044', accountNumber: '0690000040' } });
  const card = await call('createPaymentMethod', {
    body: { type: 'card', card: { number: '5531886652142950', expMonth: 9, expYear: 2032, cvv: '564' } },
  });
  const account = await call('createPaymentMethod', {
    body: { type: 'bank_account', bankAccount: { bankCode: '044', accountNumber: '0690000040' } },
    record: false,
  });
  await call('paymentMethods');
  await call('paymentMethod', { params: { id: card.id } });
  await call('setDefaultPaymentMethod', { params: { id: card.id } });
  const charge = await call('depositWithPaymentMethod', {
    body: { amount: 2500, paymentMethodId: card.id, narration: 'Top up' },
    idempotent: true,
  });
  await call('authorizeDeposit', { params: { reference: charge.reference }, body: { type: 'pin', pin: '3310' } });
  await call('authorizeDeposit', {
    params: { reference: charge.reference },
    body: { type: 'otp', otp: '12345' },
    record: false,
  });
  await call('deposit', { params: { reference: charge.reference } });
  await call('depositByBankTransfer', { body: { amount: 10000, narration: 'Invoice 1042' }, idempotent: true });
  await call('depositByUssd', { body: { amount: 1500, bankCode: '058' }, idempotent: true });
  await call('createPaymentLink', {
    body: { amount: 7500, redirectUrl: 'https://partner.example/checkout/done', title: 'Order 1042' },
    idempotent: true,
  });
  await call('fundWallet', { body: { amount: 3000, method: 'bank_transfer' }, idempotent: true });
  await call('deletePaymentMethod', { params: { id: account.id } });
  const payout = await call('withdraw', {
    body: { amount: 2000, bankCode: banks[0].code, accountNumber: '0690000040', narration: 'Payout' },
    idempotent: true,
  });
  await call('payout', { params: { reference: payout.reference } });
  const moved = await call('transfer', {
    body: { amount: 1000, recipient: other.email, narration: 'Lunch' },
    idempotent: true,
  });
  await call('walletLedger', { query: { limit: 5 } });
  const transactions = await call('walletTransactions', { query: { page: 1, limit: 5 } });
  await call('walletTransactionByReference', { params: { reference: moved.reference } });
  await call('walletTransaction', { params: { id: transactions.transactions[0].id } });
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Lagos' }).format(new Date());
  await call('walletBalances');
  await call('walletStatement', { query: { from: today, to: today, limit: 5 } });
  await call('walletStatementCsv', { query: { from: today, to: today, limit: 5 } });

  // Bills.
  await call('billCategories');
  const airtimeBillers = await call('billers', { params: { category: 'MOBILEDATA' } });
  const dataItems = await call('billerItems', { params: { billerCode: airtimeBillers[0].billerCode } });
  await call('electricityBillers');
  const discos = await call('discos');
  const cableItems = await call('providerItems', { params: { provider: 'DSTV' } });
  await call('validateBillCustomer', {
    body: { customer: '7034567890', billerCode: cableItems[0].billerCode, itemCode: cableItems[0].itemCode },
  });
  const airtime = await call('payAirtime', {
    body: { phoneNumber: '08031234567', biller: 'MTN', amount: 500, saveBeneficiary: true, beneficiaryName: 'Mum' },
    idempotent: true,
  });
  const scheduled = await call('buyAirtime', {
    body: {
      phoneNumber: '08031234567',
      biller: 'MTN',
      amount: 200,
      isSchedule: true,
      scheduleData: {
        executionDate: new Date(Date.now() + 86_400_000).toISOString(),
        isRecurring: true,
        recurrencePattern: 'monthly',
      },
    },
    idempotent: true,
  });
  await call('buyMobileData', {
    body: { phoneNumber: '08031234567', biller: airtimeBillers[0].shortName, itemCode: dataItems[0].itemCode },
    idempotent: true,
  });
  await call('subscribeCableTv', {
    body: { smartcardNumber: '7034567890', biller: 'DSTV', itemCode: cableItems[0].itemCode },
    idempotent: true,
  });
  await call('payElectricity', {
    body: { meterNumber: '45031234567', amount: 5000, disco: discos[0].shortName },
    idempotent: true,
  });
  await call('billRecords', { query: { type: 'AIRTIME', page: 1, limit: 5 } });
  await call('billRecord', { params: { reference: airtime.reference } });
  await call('billReceipt', { params: { reference: airtime.reference } });
  await call('billReceiptPage', { params: { reference: airtime.reference } });
  const beneficiaries = await call('billBeneficiaries');
  await call('deleteBillBeneficiary', { params: { id: beneficiaries[0].id } });
  const schedules = await call('billSchedules');
  const schedule = schedules.find((s: { payment: { reference?: string } }) => s) ?? scheduled;
  await call('cancelBillSchedule', { params: { id: schedule.id } });

  // Solana.
  const USDC = '5x33eLCjBfZnKWg4urRcqT8oWs8PGcbvTfSgM6phnZLi';
  const USDT = 'B3i9gsk91dQM88nyNKyjSwtMxBchh3y6eYm6GGvKmUcD';
  const SOL = 'So11111111111111111111111111111111111111112';
  await call('solanaWallet');
  await call('sandboxSolanaFaucet', { body: {}, idempotent: true });
  const recipient = await call('solanaWallet', { key: OTHER_KEY, record: false });
  await call('solanaBalance');
  await call('solanaTokenBalance', { query: { mint: USDC } });
  await call('solanaPortfolio');
  await call('walletPortfolio');
  const sent = await call('transferSolanaToken', {
    body: { to: recipient.address, tokenMintAddress: USDC, amount: '25.5' },
    idempotent: true,
  });
  await call('transferSol', { body: { to: recipient.address, amount: '0.05' }, idempotent: true });
  await call('solanaTransfers', { query: { limit: 5 } });
  await call('solanaTransfer', { params: { signature: sent.signature } });
  await call('quoteTokenToSol', { query: { inputMint: USDC, amount: '10' } });
  const quote = await call('quoteSolToToken', { query: { outputMint: USDC, amount: '0.1', slippageBps: 50 } });
  await call('quoteTokenToToken', { query: { inputMint: USDC, outputMint: USDT, amount: '10' } });
  await call('swapByQuote', { body: { quoteId: quote.quoteId }, idempotent: true });
  await call('swapTokenToSol', { body: { outputMint: USDC, amount: '0.05' }, idempotent: true });
  await call('swapSolToToken', { body: { outputMint: USDT, amount: '0.05', slippageBps: 100 }, idempotent: true });
  await call('swapTokenToToken', {
    body: { inputMint: USDC, outputMint: USDT, amount: '5', swapMode: 'ExactIn' },
    idempotent: true,
  });
  void SOL;

  // EVM: the wallet funded on base by the sandbox faucet's kit.
  await call('evmWallet');
  await call('sandboxEvmFaucet', { params: { network: 'base' }, body: {}, idempotent: true });
  const evmRecipient = await call('evmWallet', { key: OTHER_KEY, record: false });
  await call('evmNetworks');
  await call('evmBalance', { params: { network: 'base' } });
  await call('evmTokenBalance', { params: { network: 'base', token: 'USDC' } });
  await call('evmPortfolio', { params: { network: 'base' } });
  const evmSent = await call('sendEvmToken', {
    params: { network: 'base' },
    body: { token: 'USDC', to: evmRecipient.address, amount: '25.5' },
    idempotent: true,
  });
  await call('sendEvmNative', {
    params: { network: 'base' },
    body: { to: evmRecipient.address, amount: '0.01' },
    idempotent: true,
  });
  await call('evmTransfers', { query: { limit: 5 } });
  await call('evmTransfer', { params: { network: 'base', hash: evmSent.hash } });
  await call('quoteEvmNativeToToken', { params: { network: 'base' }, query: { outputToken: 'USDC', amount: '0.01' } });
  await call('quoteEvmTokenToNative', { params: { network: 'base' }, query: { inputToken: 'USDC', amount: '10' } });
  const evmQuote = await call('quoteEvmTokenToToken', {
    params: { network: 'base' },
    query: { inputToken: 'USDC', outputToken: 'USDT', amount: '10', slippageBps: 100 },
  });
  await call('swapEvmTokens', { params: { network: 'base' }, body: { quoteId: evmQuote.quoteId }, idempotent: true });
  await call('portfolio');

  // Offramp.
  await call('offrampAssets');
  await call('offrampQuote', { query: { token: 'USDC', network: 'base', amount: '100', fiat: 'NGN' } });
  const institutions = await call('offrampPayoutBanks', { query: { fiat: 'NGN' } });
  const verified = await call('verifyOfframpBankAccount', {
    body: { institution: institutions[0].code, accountNumber: '0123456789' },
  });
  const order = await call('initiateOfframpOrder', {
    body: {
      token: 'USDC',
      network: 'base',
      amount: '100',
      fiat: 'NGN',
      recipient: {
        institution: institutions[0].code,
        accountNumber: '0123456789',
        accountName: verified.accountName ?? 'Ada Obi',
        memo: 'Settlement',
      },
      reference: 'offramp-order-1042',
    },
    idempotent: true,
  });
  await call('simulateOfframpDeposit', { params: { reference: order.reference }, idempotent: true });
  await call('offrampOrders', { query: { page: 1, limit: 5 } });
  await call('offrampOrder', { params: { reference: order.reference } });

  // Customers.
  await call('businesses');
  const customer = await call('createBusinessCustomer', {
    params: { businessId: business.id },
    body: { name: 'Chioma Eze', phone: '+2348031112222', email: 'chioma@shop.example', externalRef: 'cust-0042' },
  });
  await call('businessCustomers', { params: { businessId: business.id }, query: { status: 'active', limit: 10 } });
  await call('businessCustomer', { params: { businessId: business.id, customerId: customer.id } });
  await call('updateBusinessCustomer', {
    params: { businessId: business.id, customerId: customer.id },
    body: { phone: '+2348039998888' },
  });
  await call('disableBusinessCustomer', { params: { businessId: business.id, customerId: customer.id } });

  await call('triggerSandboxEvent', { body: { type: 'payout.failed' }, idempotent: true });

  // Events and the audit trail, after everything above made some. Without workers, the relay's
  // step (numbering committed events) is run here.
  for (let round = 0; round < 100; round++) {
    const { stamped, behind } = await stampRound(database.db, { wait: true });
    if (stamped === 0 && !behind) break;
  }
  const events = await call('events', { query: { after: 0, limit: 3 } });
  await call('event', { params: { id: events.events[0].id } });
  await call('auditRecords', { query: { limit: 3 } });

  // GraphQL access: a frontend key's and a Connect app's trusted documents, limits and origins (after
  // the audit example, so that the examples recorded before keep their times).
  const storefront = await call('createApiKey', { body: { name: 'Storefront', permission: 'Read Only' } });
  const profile = 'query MyProfile { me { id firstName email } }';
  const profileHash = createHash('sha256').update(profile).digest('hex');
  const storefrontId = { id: storefront.apiKey.id };
  await call('registerApiKeyTrustedDocuments', {
    params: storefrontId,
    body: { documents: [{ body: profile, hash: `sha256:${profileHash}` }] },
  });
  await call('setApiKeyGraphQLAccess', {
    params: storefrontId,
    body: { trustedDocumentsOnly: true, maxComplexity: 500, maxDepth: 6 },
  });
  await call('apiKeyGraphQLAccess', { params: storefrontId });
  await call('removeApiKeyTrustedDocument', { params: { ...storefrontId, hash: `sha256:${profileHash}` } });
  const { client: budgetApp } = await services.oauthClients.register(user.id, {
    name: 'Budget Buddy',
    environment: 'sandbox',
    clientType: 'public',
    redirectUris: ['https://budget.example/callback'],
    allowedScopes: ['read'],
  });
  const budgetAppId = { id: budgetApp.id };
  await call('registerConnectAppTrustedDocuments', { params: budgetAppId, body: { documents: [{ body: profile }] } });
  await call('setConnectAppGraphQLAccess', {
    params: budgetAppId,
    body: { allowedOrigins: ['https://budget.example'], trustedDocumentsOnly: true },
  });
  await call('connectAppGraphQLAccess', { params: budgetAppId });
  await call('removeConnectAppTrustedDocument', { params: { ...budgetAppId, hash: profileHash } });

  // Error answers, one of each kind a sandbox shows.
  await fail('BadRequest', 'transfer', 400, { body: { amount: -5, recipient: other.email } });
  await fail('Unauthorized', 'me', 401, { key: null });
  await fail('Forbidden', 'createApiKey', 403, { key: READ_ONLY_KEY, body: { name: 'Ops' } });
  await fail('NotFound', 'walletTransaction', 404, { params: { id: randomUUID() } });
  await fail('BillNotFound', 'billRecord', 404, { params: { reference: 'BILL-NO-SUCH-REFERENCE' } });
  await fail('Conflict', 'cancelBillSchedule', 409, { params: { id: schedule.id } });
  await fail('PayloadTooLarge', 'createWebhookEndpoint', 413, {
    body: { url: 'https://partner.example/hook', description: 'x'.repeat(config.REST_BODY_LIMIT_BYTES) },
  });
  errors.PayloadTooLarge!.request.body = {
    url: 'https://partner.example/hook',
    description: `(${config.REST_BODY_LIMIT_BYTES} characters)`,
  };
  const reused = randomUUID();
  const reuse = async (amount: number, status: number) => {
    const route = routes.get('transfer')!;
    const response = await fetch(`${base}${route.path}`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'idempotency-key': reused, 'content-type': 'application/json' },
      body: JSON.stringify({ amount, recipient: other.email }),
    });
    const body = await response.json();
    if (response.status !== status) throw new Error(`Idempotency example: expected ${status}, got ${response.status}.`);
    return { request: { headers: { 'idempotency-key': reused }, body: { amount, recipient: other.email } }, body };
  };
  await reuse(100, 201);
  const second = await reuse(200, 422);
  errors.IdempotencyKeyReused = { request: second.request, response: { status: 422, body: second.body } };
  // Anonymous calls are limited to a few a minute here: the next ones are refused.
  for (let i = 0; i < 10 && !errors.TooManyRequests; i++) {
    const { status, exchange } = await send('apiInfo', { key: null, anyStatus: true });
    if (status === 429) errors.TooManyRequests = exchange;
  }

  const missing = [...routes.keys()].filter((id) => !operations[id]);
  if (missing.length) throw new Error(`No example was recorded for: ${missing.join(', ')}.`);
  const examples: RecordedExamples = normalised({
    operations: Object.fromEntries([...routes.keys()].map((id) => [id, operations[id]!])),
    errors,
  });
  writeFileSync(OUTPUT, `${JSON.stringify(examples, null, 2)}\n`);
  console.log(
    `Recorded ${Object.keys(examples.operations).length} operations and ${Object.keys(examples.errors).length} errors in ${OUTPUT}.`,
  );
} finally {
  await app.close();
  await database.close?.();
}

/**
 * The recording with what changes from run to run replaced by stable stand-ins, the same value by
 * the same stand-in everywhere (a path parameter and the id it came from stay equal): UUIDs by
 * numbered ones, date-times (and events' `created`, Unix seconds) by 2026-01-15T09:00:00Z plus one
 * second per distinct value in order of appearance, calendar dates by 2026-01-15 on, API keys and
 * webhook secrets by fixed ones.
 */
function normalised<T>(value: T): T {
  const uuids = new Map<string, string>();
  const times = new Map<string, string>();
  const dates = new Map<string, string>();
  const BASE = Date.parse('2026-01-15T09:00:00.000Z');
  const text = (s: string) =>
    s
      .replace(/pgw_(sbx|live)_[A-Za-z0-9_-]{8,}/g, (_m, env: string) => `pgw_${env}_EXAMPLEexampleEXAMPLEexample0000`)
      .replace(/pgw_(sbx|live)_[A-Za-z0-9_-]{1,7}…/g, (_m, env: string) => `pgw_${env}_EXAM…`)
      .replace(/whsec_[A-Za-z0-9+/=]{8,}/g, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (uuid) => {
        const key = uuid.toLowerCase();
        if (!uuids.has(key)) uuids.set(key, `00000000-0000-4000-8000-${String(uuids.size + 1).padStart(12, '0')}`);
        return uuids.get(key)!;
      })
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})/g, (time, fraction?: string) => {
        const instant = new Date(Date.parse(time)).toISOString();
        if (!times.has(instant)) times.set(instant, new Date(BASE + times.size * 1000).toISOString());
        const stand = times.get(instant)!;
        return fraction ? stand : stand.replace('.000Z', 'Z');
      })
      .replace(/(?<![\d-])\d{4}-\d{2}-\d{2}(?![\dT:])/g, (date) => {
        if (!dates.has(date)) dates.set(date, new Date(BASE + dates.size * 86_400_000).toISOString().slice(0, 10));
        return dates.get(date)!;
      });
  /** An event's `created` (Unix seconds) as the stand-in of its instant. */
  const seconds = (value: number) => Math.floor(Date.parse(text(new Date(value * 1000).toISOString())) / 1000);
  const visit = (node: unknown, key?: string): unknown => {
    if (typeof node === 'string') return text(node);
    if (typeof node === 'number' && key === 'created' && Number.isInteger(node) && node > 1e9) return seconds(node);
    if (Array.isArray(node)) return node.map((item) => visit(item));
    if (node && typeof node === 'object')
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [text(k), visit(v, k)]));
    return node;
  };
  return visit(value) as T;
}
