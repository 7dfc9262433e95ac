import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { OfframpReconcileHandler } from '../../src/domain/offramp/offramp-jobs.js';
import { PaycrestProvider } from '../../src/domain/offramp/paycrest-provider.js';
import { spoil } from '../fakes/malformed.js';
import { appOnFakePaycrest, usdtToNgnOrder } from '../helpers/app-on-fake-paycrest.js';
import { seedTenant } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { expectShapeFault, expectShapeRejection } from './upstream-fault.js';

const OFFRAMP = 'The offramp provider';
const wide = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };

/**
 * Paycrest answering 200 in shapes other than its documented ones: every read is a 503 naming the
 * path; an order whose answer cannot be read is not recorded (the sender never learns where to
 * pay, so Paycrest's order expires unfunded and nothing moved); an order's state that cannot be
 * read changes nothing.
 */
describe('Paycrest answers that are not their documented shape', () => {
  const clock = new ManualClock(new Date());
  const s = appOnFakePaycrest({ clock });
  afterEach(() => s.paycrest.malformed.clear());

  const call = (key = s.tenant.productionKey) => rest(s.t, key);

  it('answers 503 naming the path for assets, payout banks and account checks in the wrong shape', async () => {
    s.paycrest.malformed.add({ path: /^\/v1\/tokens/, body: spoil.notArray(['data']), times: 1 });
    expectShapeFault(await call()('GET', '/api/v1/offramp/exchange/assets'), OFFRAMP, '/data');
    s.paycrest.malformed.add({ path: /^\/v1\/tokens/, body: spoil.numberAsString(['data', 0, 'decimals']), times: 1 });
    expectShapeFault(await call()('GET', '/api/v1/offramp/exchange/assets'), OFFRAMP, '/data/0/decimals');
    s.paycrest.malformed.add({ path: /^\/v1\/institutions/, body: spoil.nullBody(), times: 1 });
    expectShapeFault(await call()('GET', '/api/v1/offramp/payouts/banks?fiat=NGN'), OFFRAMP, '/');
    s.paycrest.malformed.add({ path: /^\/v1\/institutions/, body: spoil.drop(['data', 0, 'code']), times: 1 });
    expectShapeFault(await call()('GET', '/api/v1/offramp/payouts/banks?fiat=NGN'), OFFRAMP, '/data/0/code', [
      'Guaranty Trust Bank',
    ]);
    s.paycrest.malformed.add({ path: /^\/v1\/verify-account/, body: spoil.set(['data'], ['CHIDI OKAFOR']), times: 1 });
    const verified = await call()('POST', '/api/v1/offramp/payouts/verify-account', {
      institution: 'GTBINGLA',
      accountNumber: '0123456789',
    });
    expectShapeFault(verified, OFFRAMP, '/data', ['CHIDI OKAFOR']);
    // A 200 that is neither success nor Paycrest's error is not a refusal (a 400) either.
    s.paycrest.malformed.add({ path: /^\/v1\/tokens/, body: () => ({ data: [] }), times: 1 });
    expectShapeFault(await call()('GET', '/api/v1/offramp/exchange/assets'), OFFRAMP, '/status');
    expect((await call()('GET', '/api/v1/offramp/exchange/assets')).statusCode).toBe(200);
  });

  it('answers 503 for a rate in the wrong shape, as a number or a decimal string alike', async () => {
    const quote = () => call()('GET', '/api/v1/offramp/exchange/quote?token=USDT&network=ethereum&amount=50&fiat=NGN');
    s.paycrest.malformed.add({ path: /^\/v1\/rates/, body: spoil.set(['data'], { rate: '1585.5' }), times: 1 });
    expectShapeFault(await quote(), OFFRAMP, '/data');
    s.paycrest.malformed.add({ path: /^\/v1\/rates/, body: spoil.set(['data'], '-3'), times: 1 });
    expectShapeFault(await quote(), OFFRAMP, '/data');
    s.paycrest.malformed.add({ path: /^\/v1\/rates/, body: spoil.set(['data'], 1585.5), times: 1 });
    expect((await quote()).json()).toMatchObject({ rate: 1585.5 });
  });

  it('records no order whose creation answer is unreadable, and a retry with its reference goes through', async () => {
    const tenant = await seedTenant(s.t.services);
    const spoilers = [
      spoil.drop(['data', 'receiveAddress']),
      spoil.set(['data', 'validUntil'], 'in five minutes'),
      spoil.asArray(['data']),
      spoil.nullBody(),
    ];
    for (const [i, body] of spoilers.entries()) {
      s.paycrest.malformed.add({ method: 'POST', path: /^\/v1\/sender\/orders$/, body, times: 1 });
      const placed = await call(tenant.productionKey)(
        'POST',
        '/api/v1/offramp/exchange/orders',
        usdtToNgnOrder(`MAL-OR-${i}`),
      );
      expect(placed.statusCode, placed.body).toBe(503);
      expect(placed.json().message).toMatch(
        /^The offramp provider is unavailable \(its answer does not have the documented shape at \//,
      );
      expect(placed.body).not.toContain('in five minutes');
    }
    expect((await call(tenant.productionKey)('GET', '/api/v1/offramp/ledger/transactions')).json().data.total).toBe(0);
    const retried = await call(tenant.productionKey)(
      'POST',
      '/api/v1/offramp/exchange/orders',
      usdtToNgnOrder('MAL-OR-0'),
    );
    expect(retried.statusCode, retried.body).toBe(201);
  });

  it("leaves an order as it was when Paycrest's state of it cannot be read", async () => {
    const tenant = await seedTenant(s.t.services);
    const placed = await call(tenant.productionKey)(
      'POST',
      '/api/v1/offramp/exchange/orders',
      usdtToNgnOrder('MAL-STATE'),
    );
    expect(placed.statusCode, placed.body).toBe(201);
    const providerId = [...s.paycrest.orders.values()].find((o) => o['reference'] === 'MAL-STATE')!['id'] as string;
    s.paycrest.orders.get(providerId)!['status'] = 'settled';
    s.paycrest.malformed.add({ path: /^\/v1\/sender\/orders\/[^/?]+$/, body: spoil.set(['data', 'status'], 9) });
    const runner = new JobRunner(s.t.services.db, clock, [new OfframpReconcileHandler(s.t.services.offramp)]);
    clock.advance(7 * 60_000);
    await runner.runDueJobs();
    const tracked = await call(tenant.productionKey)('GET', '/api/v1/offramp/ledger/transactions/MAL-STATE');
    expect(tracked.json().data.status).toBe('initiated');
  });

  it('rejects a sender-order list in the wrong shape as unavailable, naming the path', async () => {
    const provider = new PaycrestProvider({
      apiKey: s.paycrest.apiKey,
      apiSecret: s.paycrest.apiSecret,
      baseUrl: s.paycrest.url,
    });
    const list = /^\/v1\/sender\/orders\?/;
    // The fault of the day: `orders` not a list.
    s.paycrest.malformed.add({ path: list, body: spoil.notArray(['data', 'orders']), times: 1 });
    await expectShapeRejection(provider.listOrders(wide), '/data/orders');
    s.paycrest.malformed.add({ path: list, body: spoil.numberAsString(['data', 'total']), times: 1 });
    await expectShapeRejection(provider.listOrders(wide), '/data/total');
    s.paycrest.malformed.add({ path: list, body: spoil.drop(['data', 'orders', 0, 'id']), times: 1 });
    await expectShapeRejection(provider.listOrders(wide), '/data/orders/0/id');
    s.paycrest.malformed.add({ path: list, body: spoil.set(['data', 'orders', 0, 'amount'], '50.1234567'), times: 1 });
    await expectShapeRejection(provider.listOrders(wide), '/data/orders/0/amount', 'unavailable', ['50.1234567']);
    s.paycrest.malformed.add({ path: list, body: spoil.nullBody(), times: 1 });
    await expectShapeRejection(provider.listOrders(wide), '/');
    expect(await provider.listOrders(wide)).not.toHaveLength(0);
  });
});
