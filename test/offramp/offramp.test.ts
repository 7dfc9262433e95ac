import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import WebSocket from 'ws';
import { queryRows } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { FIAT_CURRENCIES, OFFRAMP_NETWORKS, OFFRAMP_TOKENS } from '../../src/domain/offramp/catalogue.js';
import { OfframpExpiryHandler, OfframpSandboxStepHandler } from '../../src/domain/offramp/offramp-jobs.js';
import { SANDBOX_OFFRAMP } from '../../src/domain/offramp/sandbox-offramp-provider.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The sandbox offramp end to end, over REST and GraphQL. All sandbox offramp tests live in this one
 * file: its job runner moves the clock, and would otherwise expire other files' orders.
 */
describe('offramp (sandbox)', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  let runner: JobRunner;

  beforeAll(async () => {
    s = await startTestApp({ clock, listen: true, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    runner = new JobRunner(s.t.services.db, clock, [
      new OfframpSandboxStepHandler(s.t.services.offramp),
      new OfframpExpiryHandler(s.t.services.offramp),
    ]);
  });
  afterAll(() => s.t.close());
  beforeEach(() => clock.set(new Date()));

  const rest = (
    key: string | undefined,
    method: 'GET' | 'POST',
    url: string,
    payload?: object,
    headers: Record<string, string> = {},
  ) =>
    s.t.app.inject({
      method,
      url,
      headers: { ...(key ? { 'x-api-key': key } : {}), ...headers },
      ...(payload ? { payload } : {}),
    });

  let referenceCounter = 0;
  const order = (overrides: Record<string, unknown> = {}) => ({
    token: 'USDT',
    network: 'arbitrum-one',
    amount: '25.5',
    fiat: 'NGN',
    recipient: {
      institution: 'GTBINGLA',
      accountNumber: '0123456789',
      accountName: 'Chidi Okafor',
      memo: 'Invoice 12',
    },
    reference: `ofr-${Date.now()}-${++referenceCounter}`,
    ...overrides,
  });

  /** The caller's offramp events, once the relay has stamped them all. */
  async function offrampEvents(tenant: Tenant, count: number) {
    let events: Array<{ type: string; data: Record<string, unknown> }> = [];
    await waitUntil(async () => {
      await stampCommittedEvents(s.t.services.db, { wait: true });
      const { body } = await graphql(
        s.t.app,
        tenant.keys.READ_ONLY,
        '{ events(first: 100, types: ["offramp.initiated","offramp.deposit_received","offramp.processing","offramp.fiat_sent","offramp.completed","offramp.failed"]) { events { type data } } }',
      );
      events = body.data!.events.events;
      return events.length >= count;
    });
    return events;
  }

  describe('assets and quotes', () => {
    it("lists the served token and network pairs in the envelope, with the seed's network spelling", async () => {
      const response = await rest(s.tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/exchange/assets');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ statusCode: 200, message: 'Offramp assets retrieved successfully', errors: {} });
      expect(body.data).toContainEqual({
        token: 'USDT',
        network: 'bnb-smart-chain',
        contractAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/),
        decimals: 18,
      });
      expect(body.data).toContainEqual(
        expect.objectContaining({ token: 'USDC', network: 'arbitrum-one', decimals: 6 }),
      );
      expect(
        body.data
          .filter((a: { token: string }) => a.token === 'CNGN')
          .map((a: { network: string }) => a.network)
          .sort(),
      ).toEqual(['base', 'bnb-smart-chain', 'ethereum', 'polygon']);
      expect(body.data.some((a: { network: string }) => a.network === 'optimism' || a.network === 'scroll')).toBe(
        false,
      );
    });

    it('answers the quote unwrapped: {token, amount, network, fiat, rate}, the rate being the market less the spread', async () => {
      const response = await rest(
        s.tenant.keys.READ_ONLY,
        'GET',
        '/api/v1/offramp/exchange/quote?token=USDT&network=arbitrum-one&amount=100&fiat=NGN',
      );
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        token: 'USDT',
        amount: 100,
        network: 'arbitrum-one',
        fiat: 'NGN',
        rate: 1641.75,
      });
      const kes = await rest(
        s.tenant.keys.READ_ONLY,
        'GET',
        '/api/v1/offramp/exchange/quote?token=USDC&network=base&amount=10.25&fiat=KES',
      );
      expect(kes.json()).toEqual({ token: 'USDC', amount: 10.25, network: 'base', fiat: 'KES', rate: 128.65 });
      const cngn = await rest(
        s.tenant.keys.READ_ONLY,
        'GET',
        '/api/v1/offramp/exchange/quote?token=CNGN&network=base&amount=5000&fiat=NGN',
      );
      expect(cngn.json()).toEqual({ token: 'CNGN', amount: 5000, network: 'base', fiat: 'NGN', rate: 0.99 });
    });

    it("accepts every value of the seed's enums, answering each with a quote or a clear 400 naming the field", async () => {
      const served = new Set(['base', 'polygon', 'arbitrum-one', 'bnb-smart-chain', 'ethereum', 'starknet', 'lisk']);
      for (const token of OFFRAMP_TOKENS) {
        for (const network of OFFRAMP_NETWORKS) {
          for (const fiat of FIAT_CURRENCIES) {
            const response = await rest(
              s.tenant.keys.READ_ONLY,
              'GET',
              `/api/v1/offramp/exchange/quote?token=${token}&network=${network}&amount=${token === 'CNGN' ? 1000 : 10}&fiat=${fiat}`,
            );
            const cngnNetworks = ['ethereum', 'base', 'polygon', 'bnb-smart-chain'];
            const networkServed = token === 'CNGN' ? cngnNetworks.includes(network) : served.has(network);
            const fiatServed = fiat !== 'USD' && (token !== 'CNGN' || fiat === 'NGN');
            if (networkServed && fiatServed) {
              expect(response.statusCode, `${token} ${network} ${fiat}`).toBe(200);
              expect(response.json()).toMatchObject({ token, network, fiat, rate: expect.any(Number) });
            } else {
              expect(response.statusCode, `${token} ${network} ${fiat}`).toBe(400);
              expect(response.json().message).toMatch(networkServed ? /fiat|NGN|USD/ : new RegExp(network));
            }
          }
        }
      }
    });

    it('refuses values outside the enums and bad amounts with 400 naming the field', async () => {
      const cases: Array<[string, string]> = [
        ['token=DAI&network=base&amount=10&fiat=NGN', 'token'],
        ['token=USDT&network=solana&amount=10&fiat=NGN', 'network'],
        ['token=USDT&network=arbitrum_one&amount=10&fiat=NGN', 'network'],
        ['token=USDT&network=base&amount=10&fiat=EUR', 'fiat'],
        ['token=USDT&network=base&amount=-1&fiat=NGN', 'amount'],
        ['token=USDT&network=base&amount=1e3&fiat=NGN', 'amount'],
        ['token=USDT&network=base&amount=0.1234567&fiat=NGN', 'amount'],
        ['token=USDT&network=base&amount=0.1&fiat=NGN', 'amount'],
        ['network=base&amount=10&fiat=NGN', 'token'],
        ['token=USDT&amount=10&fiat=NGN', 'network'],
        ['token=USDT&network=base&fiat=NGN', 'amount'],
        ['token=USDT&network=base&amount=10', 'fiat'],
      ];
      for (const [query, field] of cases) {
        const response = await rest(s.tenant.keys.READ_ONLY, 'GET', `/api/v1/offramp/exchange/quote?${query}`);
        expect(response.statusCode, query).toBe(400);
        expect(response.json(), query).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        expect(response.json().message, query).toContain(field);
      }
    });

    it('needs a credential', async () => {
      expect(
        (await rest(undefined, 'GET', '/api/v1/offramp/exchange/quote?token=USDT&network=base&amount=10&fiat=NGN'))
          .statusCode,
      ).toBe(401);
      expect((await rest(undefined, 'GET', '/api/v1/offramp/exchange/assets')).statusCode).toBe(401);
    });
  });

  describe('payout banks and account verification', () => {
    it('lists banks per fiat and refuses a fiat without payouts', async () => {
      const ngn = await rest(s.tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/payouts/banks?fiat=NGN');
      expect(ngn.statusCode).toBe(200);
      expect(ngn.json().data).toContainEqual({ code: 'GTBINGLA', name: 'Guaranty Trust Bank', type: 'bank' });
      const kes = await rest(s.tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/payouts/banks?fiat=KES');
      expect(kes.json().data).toContainEqual({ code: 'SAFAKEPC', name: 'M-Pesa', type: 'mobile_money' });
      const usd = await rest(s.tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/payouts/banks?fiat=USD');
      expect(usd.statusCode).toBe(400);
      expect(usd.json().message).toContain('USD');
    });

    it('verifies an account, names the holder, and refuses the unknown-account magic value', async () => {
      const ok = await rest(s.tenant.keys.READ_ONLY, 'POST', '/api/v1/offramp/payouts/verify-account', {
        institution: 'GTBINGLA',
        accountNumber: '0123456789',
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data).toEqual({
        institution: 'GTBINGLA',
        accountNumber: '0123456789',
        accountName: 'SANDBOX ACCOUNT 6789',
      });
      const mpesa = await rest(s.tenant.keys.READ_ONLY, 'POST', '/api/v1/offramp/payouts/verify-account', {
        institution: 'SAFAKEPC',
        accountNumber: '254712345678',
      });
      expect(mpesa.json().data.accountName).toBeNull();
      const unknown = await rest(s.tenant.keys.READ_ONLY, 'POST', '/api/v1/offramp/payouts/verify-account', {
        institution: 'GTBINGLA',
        accountNumber: SANDBOX_OFFRAMP.unknownAccount,
      });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().message).toContain(SANDBOX_OFFRAMP.unknownAccount);
      const badBank = await rest(s.tenant.keys.READ_ONLY, 'POST', '/api/v1/offramp/payouts/verify-account', {
        institution: 'NOPE',
        accountNumber: '0123456789',
      });
      expect(badBank.json().message).toContain('institution');
      const missing = await rest(s.tenant.keys.READ_ONLY, 'POST', '/api/v1/offramp/payouts/verify-account', {
        institution: 'GTBINGLA',
      });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().message).toContain('accountNumber');
    });
  });

  describe('orders', () => {
    it('creates an order with its deposit address, locked rate, fees and validity window, and emits offramp.initiated', async () => {
      const tenant = await seedTenant(s.t.services);
      const body = order();
      const response = await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body);
      expect(response.statusCode).toBe(201);
      const created = response.json().data;
      expect(created).toMatchObject({
        reference: body.reference,
        status: 'initiated',
        token: 'USDT',
        network: 'arbitrum-one',
        amount: '25.5',
        senderFee: '0.1275',
        transactionFee: '0.05',
        amountToSend: '25.6775',
        rate: 1641.75,
        fiat: 'NGN',
        fiatAmount: 41864.62,
        receiveAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/),
        recipient: {
          institution: 'GTBINGLA',
          bankName: 'Guaranty Trust Bank',
          accountNumber: '0123456789',
          accountName: 'Chidi Okafor',
          memo: 'Invoice 12',
        },
        version: 1,
      });
      expect(new Date(created.validUntil).getTime() - clock.now().getTime()).toBe(
        SANDBOX_OFFRAMP.validityMinutes * 60_000,
      );
      const events = await offrampEvents(tenant, 1);
      expect(events).toEqual([
        {
          type: 'offramp.initiated',
          data: {
            reference: body.reference,
            status: 'initiated',
            amount: '25.5',
            token: 'USDT',
            network: 'arbitrum-one',
            fiatAmount: 41864.62,
            fiatCurrency: 'NGN',
            bankName: 'Guaranty Trust Bank',
            accountNumber: '0123456789',
          },
        },
      ]);
    });

    it('walks the whole lifecycle on jobs after the simulated deposit, each step with its event, in order', async () => {
      const tenant = await seedTenant(s.t.services);
      const body = order();
      expect((await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body)).statusCode).toBe(
        201,
      );
      const deposited = await rest(
        tenant.keys.TRANSACTIONS,
        'POST',
        `/api/v1/offramp/sandbox/orders/${body.reference}/deposit`,
      );
      expect(deposited.statusCode).toBe(200);
      expect(deposited.json().data).toMatchObject({
        status: 'deposit_received',
        version: 2,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      const seen: string[] = [];
      for (let step = 0; step < 5; step++) {
        clock.advance(5_000);
        await runner.runDueJobs();
        seen.push(
          (await rest(tenant.keys.READ_ONLY, 'GET', `/api/v1/offramp/ledger/transactions/${body.reference}`)).json()
            .data.status,
        );
      }
      expect(seen).toEqual(['processing', 'fiat_sent', 'completed', 'completed', 'completed']);
      const events = await offrampEvents(tenant, 5);
      expect(events.map((e) => e.type)).toEqual([
        'offramp.initiated',
        'offramp.deposit_received',
        'offramp.processing',
        'offramp.fiat_sent',
        'offramp.completed',
      ]);
      expect(events.map((e) => e.data['status'])).toEqual([
        'initiated',
        'deposit_received',
        'processing',
        'fiat_sent',
        'completed',
      ]);
      // A second deposit on a finished order is refused and changes nothing.
      const again = await rest(
        tenant.keys.TRANSACTIONS,
        'POST',
        `/api/v1/offramp/sandbox/orders/${body.reference}/deposit`,
      );
      expect(again.statusCode).toBe(409);
      expect((await offrampEvents(tenant, 5)).length).toBe(5);
    });

    it('refunds an order whose payout fails (magic account) and expires an unpaid one, both as offramp.failed with distinct statuses', async () => {
      const tenant = await seedTenant(s.t.services);
      const failing = order({
        recipient: { institution: 'GTBINGLA', accountNumber: SANDBOX_OFFRAMP.failingPayoutAccount, accountName: 'X' },
      });
      const unpaid = order();
      await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', failing);
      await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', unpaid);
      await rest(tenant.keys.TRANSACTIONS, 'POST', `/api/v1/offramp/sandbox/orders/${failing.reference}/deposit`);
      for (let step = 0; step < 3; step++) {
        clock.advance(5_000);
        await runner.runDueJobs();
      }
      clock.advance(SANDBOX_OFFRAMP.validityMinutes * 60_000);
      await runner.runDueJobs();
      const refunded = (
        await rest(tenant.keys.READ_ONLY, 'GET', `/api/v1/offramp/ledger/transactions/${failing.reference}`)
      ).json().data;
      expect(refunded).toMatchObject({ status: 'refunded', failureReason: expect.stringContaining('rejected') });
      const expired = (
        await rest(tenant.keys.READ_ONLY, 'GET', `/api/v1/offramp/ledger/transactions/${unpaid.reference}`)
      ).json().data;
      expect(expired).toMatchObject({ status: 'expired', failureReason: expect.stringContaining('validUntil') });
      const failed = (await offrampEvents(tenant, 6)).filter((e) => e.type === 'offramp.failed');
      expect(failed.map((e) => [e.data['reference'], e.data['status']])).toEqual([
        [failing.reference, 'refunded'],
        [unpaid.reference, 'expired'],
      ]);
      // An expired order cannot receive a deposit.
      expect(
        (await rest(tenant.keys.TRANSACTIONS, 'POST', `/api/v1/offramp/sandbox/orders/${unpaid.reference}/deposit`))
          .statusCode,
      ).toBe(409);
    });

    it('replays an order for a retried Idempotency-Key, refuses the key with another body (422) and a reused reference (409)', async () => {
      const tenant = await seedTenant(s.t.services);
      const body = order();
      const key = { 'idempotency-key': `idem-${body.reference}` };
      const first = await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body, key);
      const retry = await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body, key);
      expect(retry.statusCode).toBe(201);
      expect(retry.json().data).toEqual(first.json().data);
      const changed = await rest(
        tenant.keys.TRANSACTIONS,
        'POST',
        '/api/v1/offramp/exchange/orders',
        { ...body, amount: '30' },
        key,
      );
      expect(changed.statusCode).toBe(422);
      const reused = await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body);
      expect(reused.statusCode).toBe(409);
      expect(reused.json().message).toContain(first.json().data.id);
      const page = (await rest(tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/ledger/transactions')).json().data;
      expect(page.total).toBe(1);
      expect((await offrampEvents(tenant, 1)).length).toBe(1);
    });

    it('creates one order from concurrent retries with one Idempotency-Key, and one from concurrent requests reusing a reference', async () => {
      const tenant = await seedTenant(s.t.services);
      const body = order();
      const keyed = await Promise.all(
        Array.from({ length: 6 }, () =>
          rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body, {
            'idempotency-key': `k-${body.reference}`,
          }),
        ),
      );
      expect(keyed.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
      expect(new Set(keyed.map((r) => r.json().data.id)).size).toBe(1);
      const twin = order();
      const unkeyed = await Promise.all(
        Array.from({ length: 6 }, () =>
          rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', twin),
        ),
      );
      expect(unkeyed.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      expect((await rest(tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/ledger/transactions')).json().data.total).toBe(
        2,
      );
      expect((await offrampEvents(tenant, 2)).map((e) => e.type)).toEqual(['offramp.initiated', 'offramp.initiated']);
    });

    it("claims an order's key like every keyed operation, and answers a retry with the order as it stands now", async () => {
      const tenant = await seedTenant(s.t.services);
      const body = order();
      const key = { 'idempotency-key': `now-${body.reference}` };
      const first = await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body, key);
      expect(first.json().data.status).toBe('initiated');
      // The key is answered in idempotency_keys, in the commit that recorded the order.
      const [claimed] = await queryRows<{ status: string; operation: string }>(
        s.t.services.db,
        sql`select status, operation from idempotency_keys where key = ${key['idempotency-key']}`,
      );
      expect(claimed).toEqual({ status: 'done', operation: 'offramp.initiate' });
      await rest(tenant.keys.TRANSACTIONS, 'POST', `/api/v1/offramp/sandbox/orders/${body.reference}/deposit`);
      const retry = await rest(tenant.keys.TRANSACTIONS, 'POST', '/api/v1/offramp/exchange/orders', body, key);
      expect(retry.statusCode).toBe(201);
      expect(retry.json().data).toMatchObject({ id: first.json().data.id, status: 'deposit_received' });
    });

    it('refuses bad order input with 400 naming the field, and a Read Only key with 403', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ token: 'DAI' }, 'token'],
        [{ network: 'solana' }, 'network'],
        [{ fiat: 'EUR' }, 'fiat'],
        [{ amount: '1.1234567' }, 'amount'],
        [{ amount: 'ten' }, 'amount'],
        [{ amount: -5 }, 'amount'],
        [{ reference: 'has spaces' }, 'reference'],
        [{ reference: undefined }, 'reference'],
        [
          { recipient: { institution: 'NOPE', accountNumber: '0123456789', accountName: 'A' } },
          'recipient.institution',
        ],
        [{ recipient: { institution: 'GTBINGLA', accountNumber: '12', accountName: 'A' } }, 'recipient.accountNumber'],
        [{ recipient: { institution: 'GTBINGLA', accountNumber: '0123456789' } }, 'recipient.accountName'],
        [{ refundAddress: 'not-an-address' }, 'refundAddress'],
        [{ fiat: 'USD' }, 'fiat'],
        [{ network: 'optimism' }, 'network'],
      ];
      for (const [override, field] of cases) {
        const response = await rest(
          s.tenant.keys.TRANSACTIONS,
          'POST',
          '/api/v1/offramp/exchange/orders',
          order(override),
        );
        expect(response.statusCode, field).toBe(400);
        expect(response.json().message, JSON.stringify(override)).toContain(field);
      }
      expect((await rest(s.tenant.keys.READ_ONLY, 'POST', '/api/v1/offramp/exchange/orders', order())).statusCode).toBe(
        403,
      );
    });

    it("pages and filters the history, and answers another user's or a missing reference with 404", async () => {
      const tenant = await seedTenant(s.t.services);
      const made = [];
      for (const [token, network, fiat] of [
        ['USDT', 'base', 'NGN'],
        ['USDC', 'polygon', 'KES'],
        ['USDT', 'bnb-smart-chain', 'GHS'],
      ] as const) {
        clock.advance(1000);
        made.push(
          (
            await rest(
              tenant.keys.TRANSACTIONS,
              'POST',
              '/api/v1/offramp/exchange/orders',
              order({
                token,
                network,
                fiat,
                recipient: {
                  institution: fiat === 'NGN' ? 'GTBINGLA' : fiat === 'KES' ? 'KCBLKENX' : 'GHCBGHAC',
                  accountNumber: '0123456789',
                  accountName: 'A',
                },
              }),
            )
          ).json().data,
        );
      }
      await rest(tenant.keys.TRANSACTIONS, 'POST', `/api/v1/offramp/sandbox/orders/${made[0].reference}/deposit`);
      const list = (query: string) =>
        rest(tenant.keys.READ_ONLY, 'GET', `/api/v1/offramp/ledger/transactions${query}`).then((r) => r.json());
      const all = await list('');
      expect(all.data).toMatchObject({ page: 1, limit: 20, total: 3, totalPages: 1, hasNext: false, hasPrev: false });
      expect(all.data.orders.map((o: { reference: string }) => o.reference)).toEqual(
        made.map((o) => o.reference).reverse(),
      );
      expect((await list('?token=USDT')).data.total).toBe(2);
      expect((await list('?network=bnb-smart-chain')).data.orders[0].network).toBe('bnb-smart-chain');
      expect((await list('?fiat=KES')).data.orders.map((o: { fiat: string }) => o.fiat)).toEqual(['KES']);
      expect(
        (await list('?status=deposit_received')).data.orders.map((o: { reference: string }) => o.reference),
      ).toEqual([made[0].reference]);
      expect((await list(`?from=${encodeURIComponent(made[1].createdAt)}`)).data.total).toBe(2);
      expect((await list(`?to=${encodeURIComponent(made[1].createdAt)}`)).data.total).toBe(1);
      // Calendar dates work as on every list: the whole Lagos day.
      const lagosDay = new Date(new Date(made[1].createdAt).getTime() + 3600_000).toISOString().slice(0, 10);
      expect((await list(`?from=${lagosDay}&to=${lagosDay}`)).data.total).toBe(3);
      expect((await list('?to=2000-01-01')).data.total).toBe(0);
      const second = await list('?limit=2&page=2');
      expect(second.data).toMatchObject({ page: 2, limit: 2, total: 3, totalPages: 2, hasNext: false, hasPrev: true });
      expect(second.data.orders).toHaveLength(1);
      expect((await list('?page=9')).data.orders).toEqual([]);
      for (const bad of ['?limit=101', '?page=0', '?status=done', '?network=solana', '?from=yesterday']) {
        const response = await rest(tenant.keys.READ_ONLY, 'GET', `/api/v1/offramp/ledger/transactions${bad}`);
        expect(response.statusCode, bad).toBe(400);
      }
      // Another user's reference looks exactly like a missing one.
      const other = await rest(
        s.tenant.keys.READ_ONLY,
        'GET',
        `/api/v1/offramp/ledger/transactions/${made[0].reference}`,
      );
      const missing = await rest(s.tenant.keys.READ_ONLY, 'GET', '/api/v1/offramp/ledger/transactions/nope-nope');
      expect(other.statusCode).toBe(404);
      expect(missing.statusCode).toBe(404);
      expect(other.json().error).toBe(missing.json().error);
      expect(
        (await rest(s.tenant.keys.TRANSACTIONS, 'POST', `/api/v1/offramp/sandbox/orders/${made[1].reference}/deposit`))
          .statusCode,
      ).toBe(404);
      // Production credentials never see sandbox orders; production offramp without Paycrest is 503.
      expect(
        (await rest(tenant.productionKey, 'GET', `/api/v1/offramp/ledger/transactions/${made[0].reference}`))
          .statusCode,
      ).toBe(404);
      const unconfigured = await rest(tenant.productionKey, 'GET', '/api/v1/offramp/exchange/assets');
      expect(unconfigured.statusCode).toBe(503);
      expect(unconfigured.json().message).toContain('PAYCREST_API_KEY');
    });
  });

  describe('GraphQL', () => {
    it('serves every offramp field, with "_" network names, and streams typed order updates', async () => {
      const tenant = await seedTenant(s.t.services);
      const key = tenant.keys.FULL_ACCESS;
      const assets = await graphql(s.t.app, key, '{ offrampAssets { token network contractAddress decimals } }');
      expect(assets.body.data!.offrampAssets).toContainEqual(
        expect.objectContaining({ token: 'USDT', network: 'arbitrum_one', decimals: 6 }),
      );
      const quote = await graphql(
        s.t.app,
        key,
        '{ offrampQuote(token: USDT, network: bnb_smart_chain, amount: "10", fiat: GHS) { token amount network fiat rate } }',
      );
      expect(quote.body.data!.offrampQuote).toEqual({
        token: 'USDT',
        amount: 10,
        network: 'bnb_smart_chain',
        fiat: 'GHS',
        rate: 15.32,
      });
      const banks = await graphql(s.t.app, key, '{ offrampPayoutBanks(fiat: NGN) { code name type } }');
      expect(banks.body.data!.offrampPayoutBanks.length).toBeGreaterThan(3);
      const verified = await graphql(
        s.t.app,
        key,
        'mutation { verifyOfframpBankAccount(input: { institution: "ZEIBNGLA", accountNumber: "2222333344" }) { institution accountNumber accountName } }',
      );
      expect(verified.body.data!.verifyOfframpBankAccount).toEqual({
        institution: 'ZEIBNGLA',
        accountNumber: '2222333344',
        accountName: 'SANDBOX ACCOUNT 3344',
      });

      const updates: Array<Record<string, unknown>> = [];
      const client = createClient({
        url: s.wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { 'x-api-key': key },
        retryAttempts: 0,
      });
      let failure: unknown;
      // `after: 0` replays what happens before the subscription is live, so nothing waits for it.
      client.subscribe<{ offrampOrderUpdates: Record<string, unknown> }>(
        {
          query:
            'subscription { offrampOrderUpdates(after: 0) { eventId type seq reference status amount token network fiatAmount fiatCurrency bankName accountNumber } }',
        },
        {
          next: (m) => (m.errors ? (failure = m.errors) : updates.push(m.data!.offrampOrderUpdates)),
          error: (e) => (failure = e),
          complete: () => undefined,
        },
      );
      try {
        const reference = `gql-${Date.now()}`;
        const created = await graphql(
          s.t.app,
          key,
          `mutation { initiateOfframpOrder(input: { token: USDC, network: base, amount: "12", fiat: NGN, reference: "${reference}", refundAddress: "0x${'1'.repeat(40)}",
            recipient: { institution: "ABNGNGLA", accountNumber: "0011223344", accountName: "Ngozi Eze" } }) {
            id reference status token network amount senderFee transactionFee amountToSend rate fiat fiatAmount receiveAddress validUntil
            recipient { institution bankName accountNumber accountName memo } refundAddress failureReason txHash version createdAt updatedAt } }`,
        );
        expect(created.body.errors).toBeUndefined();
        expect(created.body.data!.initiateOfframpOrder).toMatchObject({
          reference,
          status: 'initiated',
          network: 'base',
          fiatAmount: '19701.00',
          refundAddress: `0x${'1'.repeat(40)}`,
          failureReason: null,
          txHash: null,
        });
        const deposited = await graphql(
          s.t.app,
          key,
          `mutation { simulateOfframpDeposit(reference: "${reference}") { status version } }`,
        );
        expect(deposited.body.data!.simulateOfframpDeposit).toEqual({ status: 'deposit_received', version: 2 });
        const one = await graphql(s.t.app, key, `{ offrampOrder(reference: "${reference}") { status } }`);
        expect(one.body.data!.offrampOrder.status).toBe('deposit_received');
        const page = await graphql(
          s.t.app,
          key,
          '{ offrampOrders(filter: { network: base }, limit: 5) { total orders { reference network } hasNext } }',
        );
        expect(page.body.data!.offrampOrders).toEqual({
          total: 1,
          orders: [{ reference, network: 'base' }],
          hasNext: false,
        });
        await waitUntil(async () => {
          if (failure) throw new Error(`subscription failed: ${JSON.stringify(failure)}`);
          await stampCommittedEvents(s.t.services.db, { wait: true });
          s.t.services.eventFeed.wake();
          return updates.length >= 2;
        });
        expect(updates.map((u) => [u['type'], u['status']])).toEqual([
          ['offramp.initiated', 'initiated'],
          ['offramp.deposit_received', 'deposit_received'],
        ]);
        expect(updates[0]).toMatchObject({
          reference,
          amount: '12',
          token: 'USDC',
          network: 'base',
          fiatAmount: 19701,
          fiatCurrency: 'NGN',
          bankName: 'Access Bank',
          accountNumber: '0011223344',
        });
        const missing = await graphql(
          s.t.app,
          s.tenant.keys.READ_ONLY,
          `{ offrampOrder(reference: "${reference}") { status } }`,
        );
        expect(missing.body.errors![0]!.extensions['code']).toBe('NOT_FOUND');
      } finally {
        await client.dispose();
      }
    });
  });
});
