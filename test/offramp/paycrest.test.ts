import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { OfframpReconcileHandler } from '../../src/domain/offramp/offramp-jobs.js';
import { graphql, seedTenant, type Tenant } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';
import { appOnFakePaycrest, usdtToNgnOrder } from '../helpers/app-on-fake-paycrest.js';

/** Production offramp through the Paycrest adapter, against a local fake of its Sender API. */
describe('offramp on Paycrest (production)', () => {
  const clock = new ManualClock(new Date());
  const s = appOnFakePaycrest({ clock, listen: true });

  const rest = (key: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    s.t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });

  const placeOrder = async (tenant: Tenant, reference: string) => {
    const response = await rest(
      tenant.productionKey,
      'POST',
      '/api/v1/offramp/exchange/orders',
      usdtToNgnOrder(reference),
    );
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data;
  };

  const providerIdOf = (reference: string) =>
    [...s.paycrest.orders.values()].find((o) => o['reference'] === reference)!['id'] as string;

  async function eventsOf(tenant: Tenant, count: number) {
    let events: Array<{ type: string; data: Record<string, unknown> }> = [];
    await waitUntil(async () => {
      await stampCommittedEvents(s.t.services.db, { wait: true });
      const { body } = await graphql(s.t.app, tenant.productionKey, '{ events(first: 100) { events { type data } } }');
      events = body.data!.events.events;
      return events.length >= count;
    }, 10_000); // as test/helpers/events.ts: stamping waits for every older transaction on the server
    return events;
  }

  it("reads assets from /v1/tokens, keeping only the seed's tokens and networks", async () => {
    const response = await rest(s.tenant.productionKey, 'GET', '/api/v1/offramp/exchange/assets');
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual([
      {
        token: 'USDT',
        network: 'ethereum',
        contractAddress: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
        decimals: 6,
      },
      { token: 'USDC', network: 'base', contractAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', decimals: 6 },
      {
        token: 'USDT',
        network: 'bnb-smart-chain',
        contractAddress: '0x55d398326f99059fF775485246999027B3197955',
        decimals: 18,
      },
      { token: 'CNGN', network: 'base', contractAddress: '0x46C85152bFe9f96829aA94755D9f915F9B10EF5F', decimals: 6 },
    ]);
    expect(s.paycrest.requests.at(-1)).toMatchObject({ method: 'GET', url: '/v1/tokens' });
  });

  it('quotes with the rate Paycrest returns as a decimal string, and answers what it does not serve with a clear 400', async () => {
    const quote = await rest(
      s.tenant.productionKey,
      'GET',
      '/api/v1/offramp/exchange/quote?token=USDT&network=ethereum&amount=50&fiat=NGN',
    );
    expect(quote.json()).toEqual({ token: 'USDT', amount: 50, network: 'ethereum', fiat: 'NGN', rate: 1585.5 });
    expect(s.paycrest.requests.at(-1)!.url).toBe('/v1/rates/USDT/50/NGN?network=ethereum');
    const cases: Array<[string, string, RegExp]> = [
      ['token=USDT&network=ethereum&amount=50&fiat=USD', 'fiat', /does not pay out USD/],
      ['token=CNGN&network=base&amount=5000&fiat=KES', 'fiat', /only be converted to NGN/],
      ['token=USDT&network=optimism&amount=50&fiat=NGN', 'network', /optimism/],
      ['token=USDC&network=polygon&amount=50&fiat=NGN', 'network', /polygon/],
      ['token=USDT&network=ethereum&amount=200000&fiat=NGN', 'amount', /No provider/],
    ];
    for (const [query, field, message] of cases) {
      const response = await rest(s.tenant.productionKey, 'GET', `/api/v1/offramp/exchange/quote?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().message, query).toMatch(message);
      expect(response.json().message, query).toContain(field);
    }
  });

  it('lists institutions and verifies accounts through Paycrest ("OK" means no name)', async () => {
    const banks = await rest(s.tenant.productionKey, 'GET', '/api/v1/offramp/payouts/banks?fiat=NGN');
    expect(banks.json().data).toContainEqual({ name: 'Guaranty Trust Bank', code: 'GTBINGLA', type: 'bank' });
    const verified = await rest(s.tenant.productionKey, 'POST', '/api/v1/offramp/payouts/verify-account', {
      institution: 'GTBINGLA',
      accountNumber: '0123456789',
    });
    expect(verified.json().data).toEqual({
      institution: 'GTBINGLA',
      accountNumber: '0123456789',
      accountName: 'CHIDI OKAFOR',
    });
    const mpesa = await rest(s.tenant.productionKey, 'POST', '/api/v1/offramp/payouts/verify-account', {
      institution: 'SAFAKEPC',
      accountNumber: '254712345678',
    });
    expect(mpesa.json().data.accountName).toBeNull();
    const unknown = await rest(s.tenant.productionKey, 'POST', '/api/v1/offramp/payouts/verify-account', {
      institution: 'GTBINGLA',
      accountNumber: '1111111111',
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('accountNumber');
  });

  it("creates a sender order and follows Paycrest's signed webhooks through the lifecycle, ignoring repeats and refusing forgeries", async () => {
    const tenant = await seedTenant(s.t.services);
    const reference = `pc-${Date.now()}`;
    const order = await placeOrder(tenant, reference);
    expect(order).toMatchObject({
      status: 'initiated',
      rate: 1585.5,
      senderFee: '0',
      transactionFee: '0.5',
      amountToSend: '50.5',
      fiatAmount: 79275,
    });
    const sent = s.paycrest.requests.find((r) => r.url === '/v1/sender/orders')!.body;
    expect(sent).toMatchObject({
      amount: 50,
      token: 'USDT',
      rate: 1585.5,
      network: 'ethereum',
      reference,
      recipient: {
        institution: 'GTBINGLA',
        accountIdentifier: '0123456789',
        accountName: 'Chidi Okafor',
        currency: 'NGN',
      },
    });
    const id = providerIdOf(reference);

    const forged = await s.paycrest.notify(s.baseUrl, id, 'payment_order.deposited', { secret: 'not-the-secret' });
    expect(forged.status).toBe(401);
    expect(
      (await rest(tenant.productionKey, 'GET', `/api/v1/offramp/ledger/transactions/${reference}`)).json().data.status,
    ).toBe('initiated');

    // Paycrest retries: eight copies of the deposit notice at once move the order once.
    expect(
      (
        await Promise.all(Array.from({ length: 8 }, () => s.paycrest.notify(s.baseUrl, id, 'payment_order.deposited')))
      ).map((r) => r.status),
    ).toEqual(Array(8).fill(200));
    for (const event of [
      'payment_order.deposited',
      'payment_order.deposited',
      'payment_order.pending',
      'payment_order.compliance_hold',
      'payment_order.validated',
      'payment_order.settling',
      'payment_order.settled',
      'payment_order.settled',
      'payment_order.deposited',
    ]) {
      const response = await s.paycrest.notify(
        s.baseUrl,
        id,
        event,
        event === 'payment_order.compliance_hold' ? { status: 'pending' } : {},
      );
      expect(response.status, event).toBe(200);
    }
    const final = (await rest(tenant.productionKey, 'GET', `/api/v1/offramp/ledger/transactions/${reference}`)).json()
      .data;
    expect(final).toMatchObject({ status: 'completed', version: 5, txHash: `0x${'ab'.repeat(32)}` });
    const events = await eventsOf(tenant, 5);
    expect(events.map((e) => e.type)).toEqual([
      'offramp.initiated',
      'offramp.deposit_received',
      'offramp.processing',
      'offramp.fiat_sent',
      'offramp.completed',
    ]);
    expect(events.every((e) => e.data['network'] === 'ethereum' && e.data['fiatAmount'] === 79275)).toBe(true);
  });

  it('ends an unpaid order as expired and a failed payout as refunded, both offramp.failed', async () => {
    const tenant = await seedTenant(s.t.services);
    await placeOrder(tenant, `pc-exp-${Date.now()}`);
    await placeOrder(tenant, `pc-ref-${Date.now()}`);
    const [expiring, refunding] = [...s.paycrest.orders.values()].slice(-2).map((o) => o['id'] as string);
    await s.paycrest.notify(s.baseUrl, expiring!, 'payment_order.expired');
    await s.paycrest.notify(s.baseUrl, refunding!, 'payment_order.deposited');
    await s.paycrest.notify(s.baseUrl, refunding!, 'payment_order.refunding');
    await s.paycrest.notify(s.baseUrl, refunding!, 'payment_order.refunded');
    // Two initiated, the deposit, processing (refunding), and the two failures.
    const failed = (await eventsOf(tenant, 6)).filter((e) => e.type === 'offramp.failed').map((e) => e.data['status']);
    expect(failed).toEqual(['expired', 'refunded']);
  });

  it('reconciles from GET /v1/sender/orders/{id} when a webhook never comes', async () => {
    const tenant = await seedTenant(s.t.services);
    const reference = `pc-rec-${Date.now()}`;
    await placeOrder(tenant, reference);
    s.paycrest.orders.get(providerIdOf(reference))!['status'] = 'settled';
    const runner = new JobRunner(s.t.services.db, clock, [new OfframpReconcileHandler(s.t.services.offramp)]);
    clock.advance(7 * 60_000);
    await runner.runDueJobs();
    expect(
      (await rest(tenant.productionKey, 'GET', `/api/v1/offramp/ledger/transactions/${reference}`)).json().data.status,
    ).toBe('completed');
  });

  it('answers 503 while Paycrest is down, and creates nothing', async () => {
    const tenant = await seedTenant(s.t.services);
    s.paycrest.down = true;
    try {
      const quote = await rest(
        tenant.productionKey,
        'GET',
        '/api/v1/offramp/exchange/quote?token=USDT&network=ethereum&amount=50&fiat=NGN',
      );
      expect(quote.statusCode).toBe(503);
      const order = await rest(tenant.productionKey, 'POST', '/api/v1/offramp/exchange/orders', {
        token: 'USDT',
        network: 'ethereum',
        amount: '50',
        fiat: 'NGN',
        reference: `pc-down-${Date.now()}`,
        recipient: { institution: 'GTBINGLA', accountNumber: '0123456789', accountName: 'A' },
      });
      expect(order.statusCode).toBe(503);
    } finally {
      s.paycrest.down = false;
    }
    expect((await rest(tenant.productionKey, 'GET', '/api/v1/offramp/ledger/transactions')).json().data.total).toBe(0);
  });
});
