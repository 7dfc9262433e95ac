import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { VALUE_MOVING_MUTATIONS } from '../../src/graphql/value-moving.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

const USDC = tokenBySymbol('USDC')!.address;
const USDT = tokenBySymbol('USDT')!.address;

describe('Idempotency-Key on every operation that moves value', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ clock, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  const keyed = (key: string) => ({ 'idempotency-key': key });

  async function pinCardDeposit(tenant: Tenant, cvv = '564'): Promise<string> {
    const call = rest(s.t, tenant.keys.FULL_ACCESS);
    const method = await call('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: { number: SANDBOX_PAYMENTS.cards.pinThenOtp, expMonth: 9, expYear: new Date().getUTCFullYear() + 3, cvv },
    });
    expect(method.statusCode, method.body).toBe(201);
    const deposit = await call('POST', '/api/v1/wallet/deposit/payment-method', {
      amount: 1500,
      paymentMethodId: method.json().data.id,
    });
    expect(deposit.statusCode, deposit.body).toBe(201);
    return deposit.json().data.reference;
  }

  it('the Solana faucet: repeated without a key it funds again (no 500); with one key it replays', async () => {
    const tenant = await seedTenant(s.t.services);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const body = { asset: 'USDC', amount: '5' };
    const first = await call('POST', '/api/v1/solana/sandbox/faucet', body);
    const second = await call('POST', '/api/v1/solana/sandbox/faucet', body);
    expect([first.statusCode, second.statusCode], second.body).toEqual([201, 201]);
    const usdc = async () =>
      (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/solana/token-balance?mint=${USDC}`)).json().data.amount;
    expect(await usdc()).toBe('10');
    const once = await call('POST', '/api/v1/solana/sandbox/faucet', body, keyed('faucet-1'));
    const replay = await call('POST', '/api/v1/solana/sandbox/faucet', body, keyed('faucet-1'));
    expect([once.statusCode, replay.statusCode]).toEqual([201, 201]);
    expect(replay.json().data).toEqual(once.json().data);
    expect(await usdc()).toBe('15');
    const other = await call(
      'POST',
      '/api/v1/solana/sandbox/faucet',
      { asset: 'USDC', amount: '6' },
      keyed('faucet-1'),
    );
    expect(other.statusCode).toBe(422);
    expect(await usdc()).toBe('15');
  });

  it('the sandbox virtual-account credit: one key credits once and replays the same deposit', async () => {
    const tenant = await seedTenant(s.t.services);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const url = '/api/v1/wallet/sandbox/virtual-account/transfer';
    const first = await call('POST', url, { amount: 250 }, keyed('va-1'));
    const again = await call('POST', url, { amount: 250 }, keyed('va-1'));
    expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
    expect(again.json().data.reference).toBe(first.json().data.reference);
    expect((await balanceOf(s.t, tenant)).availableKobo).toBe(25_000);
    expect((await call('POST', url, { amount: 300 }, keyed('va-1'))).statusCode).toBe(422);
    // Without a key each call is a new transfer.
    await call('POST', url, { amount: 250 });
    expect((await balanceOf(s.t, tenant)).availableKobo).toBe(50_000);
  });

  it('authorize a deposit: a keyed PIN step replays its answer instead of a refusal; the next step takes a new key', async () => {
    const tenant = await seedTenant(s.t.services);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const reference = await pinCardDeposit(tenant);
    const url = `/api/v1/wallet/deposits/${reference}/authorize`;
    const pin = await call('POST', url, { type: 'pin', pin: SANDBOX_PAYMENTS.pin }, keyed('auth-pin'));
    expect(pin.statusCode, pin.body).toBe(200);
    expect(pin.json().data.nextAction.type).toBe('requires_otp');
    const replay = await call('POST', url, { type: 'pin', pin: SANDBOX_PAYMENTS.pin }, keyed('auth-pin'));
    expect(replay.statusCode).toBe(200);
    expect(replay.json().data).toEqual(pin.json().data);
    // Without the key the same step is refused: the deposit no longer waits for a PIN.
    const unkeyed = await call('POST', url, { type: 'pin', pin: SANDBOX_PAYMENTS.pin });
    expect(unkeyed.statusCode, unkeyed.body).toBe(400);
    expect(unkeyed.json().message).toMatch(/waiting for requires_otp/);
    // Another step under the same key is another request.
    expect((await call('POST', url, { type: 'otp', otp: SANDBOX_PAYMENTS.otp }, keyed('auth-pin'))).statusCode).toBe(
      422,
    );
    const otp = await call('POST', url, { type: 'otp', otp: SANDBOX_PAYMENTS.otp }, keyed('auth-otp'));
    expect(otp.json().data.status).toBe('COMPLETED');
    expect((await balanceOf(s.t, tenant)).availableKobo).toBe(150_000);
  });

  it('the offramp sandbox deposit replays under one key; without a key a second is 409', async () => {
    const tenant = await seedTenant(s.t.services);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const reference = `ofr-idem-${Date.now()}`;
    const created = await call('POST', '/api/v1/offramp/exchange/orders', {
      token: 'USDT',
      network: 'arbitrum-one',
      amount: '25.5',
      fiat: 'NGN',
      recipient: { institution: 'GTBINGLA', accountNumber: '0123456789', accountName: 'Chidi Okafor' },
      reference,
    });
    expect(created.statusCode, created.body).toBe(201);
    const url = `/api/v1/offramp/sandbox/orders/${reference}/deposit`;
    const first = await call('POST', url, undefined, keyed('ofr-dep'));
    const replay = await call('POST', url, undefined, keyed('ofr-dep'));
    expect([first.statusCode, replay.statusCode]).toEqual([200, 200]);
    expect(replay.json().data).toEqual(first.json().data);
    expect((await call('POST', url)).statusCode).toBe(409);
  });

  it('a swap quote executes once, with or without a key', async () => {
    const tenant = await seedTenant(s.t.services);
    const call = rest(s.t, tenant.keys.FULL_ACCESS);
    expect((await call('POST', '/api/v1/solana/sandbox/faucet', {})).statusCode).toBe(201);
    const quote = (
      await call('GET', `/api/v1/solana-exchange/quote/token-to-token?inputMint=${USDC}&outputMint=${USDT}&amount=3`)
    ).json().data;
    const first = await call('POST', '/api/v1/solana-exchange/swap', { quoteId: quote.quoteId });
    expect(first.statusCode, first.body).toBe(201);
    const second = await call('POST', '/api/v1/solana-exchange/swap', { quoteId: quote.quoteId });
    expect(second.statusCode).toBe(409);
    expect(second.json().message).toMatch(/already executed/);
    const keyedAgain = await call('POST', '/api/v1/solana-exchange/swap', { quoteId: quote.quoteId }, keyed('q-1'));
    expect(keyedAgain.statusCode).toBe(409);
    const swaps = (await call('GET', '/api/v1/solana/transactions'))
      .json()
      .data.filter((x: { kind?: string; signature: string }) => x.signature === first.json().data.signature);
    expect(swaps).toHaveLength(1);
    const usdc = (await call('GET', `/api/v1/solana/token-balance?mint=${USDC}`)).json().data.amount;
    expect(usdc).toBe('997');
  });

  it('GraphQL: a keyed request selecting two value-moving fields (aliases or fragments) is refused before anything moves', async () => {
    const tenant = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const before = await balanceOf(s.t, tenant);
    const send = async (query: string, key?: string) => {
      const response = await s.t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: {
          'content-type': 'application/json',
          'x-api-key': tenant.keys.TRANSACTIONS,
          ...(key ? keyed(key) : {}),
        },
        payload: { query },
      });
      return { status: response.statusCode, body: response.json() };
    };
    const move = `(input: { recipient: "${other.user.id}", amount: 10 }) { reference }`;
    for (const query of [
      `mutation { a: transfer${move} b: transfer${move} }`,
      `mutation { transfer${move} withdraw(input: { amount: 10, bankCode: "044", accountNumber: "0690000040" }) { reference } }`,
      `mutation { transfer${move} ...More } fragment More on Mutation { again: transfer${move} }`,
      `mutation { transfer${move} ... on Mutation { again: transfer${move} } }`,
    ]) {
      const refused = await send(query, 'many-1');
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(refused.body.errors[0].message).toMatch(/Idempotency-Key/);
    }
    expect(await balanceOf(s.t, tenant)).toEqual(before);
    // One value-moving field under a key runs; the key was never used by the refused requests.
    const one = await send(`mutation { transfer${move} }`, 'many-1');
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect((await balanceOf(s.t, tenant)).availableKobo).toBe(before.availableKobo - 1000);
    // Without a key two fields are two requests the caller chose to make.
    const two = await send(`mutation { a: transfer${move} b: transfer${move} }`);
    expect(two.body.errors).toBeUndefined();
  });

  it('OpenAPI declares Idempotency-Key on exactly the routes that move value; every listed mutation exists', async () => {
    const { body } = await graphql(
      s.t.app,
      s.tenant.keys.READ_ONLY,
      '{ __schema { mutationType { fields { name } } } }',
    );
    const mutations = new Set(body.data!.__schema.mutationType.fields.map((f: { name: string }) => f.name));
    for (const name of VALUE_MOVING_MUTATIONS) expect(mutations.has(name), name).toBe(true);
    const spec = (await s.t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const keyed: string[] = [];
    for (const [path, operations] of Object.entries<
      Record<string, { parameters?: Array<{ in: string; name: string }> }>
    >(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'))
          keyed.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(keyed.sort()).toEqual(
      [
        'POST /api/v1/bills/buy-airtime',
        'POST /api/v1/bills/pay/airtime',
        'POST /api/v1/bills/pay/cable',
        'POST /api/v1/bills/pay/data',
        'POST /api/v1/bills/pay/electricity',
        'POST /api/v1/events/sandbox/trigger',
        'POST /api/v1/evm/{network}/sandbox/faucet',
        'POST /api/v1/evm/{network}/send-native',
        'POST /api/v1/evm/{network}/send-token',
        'POST /api/v1/offramp/exchange/orders',
        'POST /api/v1/offramp/sandbox/orders/{reference}/deposit',
        'POST /api/v1/solana-exchange/swap',
        'POST /api/v1/solana-exchange/swap-sol-to-token',
        'POST /api/v1/solana-exchange/swap-token-to-sol',
        'POST /api/v1/solana-exchange/swap-token-to-token',
        'POST /api/v1/solana/sandbox/faucet',
        'POST /api/v1/solana/transfer-sol',
        'POST /api/v1/solana/transfer-token',
        'POST /api/v1/wallet/deposit/payment-method',
        'POST /api/v1/wallet/deposits/bank-transfer',
        'POST /api/v1/wallet/deposits/payment-link',
        'POST /api/v1/wallet/deposits/ussd',
        'POST /api/v1/wallet/deposits/{reference}/authorize',
        'POST /api/v1/wallet/fund',
        'POST /api/v1/wallet/sandbox/virtual-account/transfer',
        'POST /api/v1/wallet/transfer',
        'POST /api/v1/wallet/withdraw',
      ].sort(),
    );
  });
});
