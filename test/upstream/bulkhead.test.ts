import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { restErrorReply } from '../../src/domain/error-mapping.js';
import { DomainError } from '../../src/domain/errors.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { Bulkhead } from '../../src/domain/upstream/bulkhead.js';
import { graphql, seedTenant, type StartedTestApp, startTestApp } from '../helpers/app.js';
import { MetricsText } from '../helpers/metrics-text.js';
import { rest } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';
import { balanceOf, fund } from '../helpers/wallet.js';

/** A call the test ends when it chooses. */
function held() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { ended, end };
}

const busyOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('a provider bulkhead', () => {
  it('lets `limit` calls in at once; the next waits its turn, first come first served', async () => {
    const bulkhead = new Bulkhead('test', { limit: 2, maxWaitMs: 60_000 });
    const calls = [held(), held(), held(), held()];
    const order: number[] = [];
    const running = calls.map((call, i) =>
      bulkhead.run(async () => {
        order.push(i);
        await call.ended;
      }),
    );
    await waitUntil(() => order.length === 2);
    expect(bulkhead.stats()).toMatchObject({ inFlight: 2, waiting: 2, rejected: 0 });
    calls[1]!.end();
    await waitUntil(() => order.length === 3);
    calls[0]!.end();
    await waitUntil(() => order.length === 4);
    expect(order).toEqual([0, 1, 2, 3]);
    calls[2]!.end();
    calls[3]!.end();
    await Promise.all(running);
    expect(bulkhead.stats()).toMatchObject({ inFlight: 0, waiting: 0, rejected: 0 });
  });

  it('refuses with 503 BUSY and Retry-After once the wait runs out, never running the refused call, and loses no place', async () => {
    const bulkhead = new Bulkhead('test', { limit: 1, maxWaitMs: 30 });
    const first = held();
    const running = bulkhead.run(() => first.ended);
    let ran = false;
    const error = await busyOf(bulkhead.run(async () => void (ran = true)));
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(DomainError);
    const reply = restErrorReply(error as DomainError);
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable', errorCode: 'BUSY' });
    expect(bulkhead.stats()).toMatchObject({ inFlight: 1, waiting: 0, rejected: 1 });
    first.end();
    await running;
    // The timed-out waiter left no trace: the freed place goes to the next caller at once.
    await bulkhead.run(async () => void (ran = true));
    expect(ran).toBe(true);
    expect(bulkhead.stats()).toMatchObject({ inFlight: 0, waiting: 0, rejected: 1 });
  });

  it('refuses at once with no wait allowed, or when as many already wait as the limit', async () => {
    const now = new Bulkhead('test', { limit: 1, maxWaitMs: 0 });
    const first = held();
    const running = now.run(() => first.ended);
    expect(await busyOf(now.run(async () => undefined))).toMatchObject({ code: 'BUSY', retryAfter: 1 });
    first.end();
    await running;

    const line = new Bulkhead('test', { limit: 1, maxWaitMs: 60_000 });
    const inFlight = held();
    const calls = [line.run(() => inFlight.ended), line.run(async () => undefined)];
    const started = Date.now();
    expect(await busyOf(line.run(async () => undefined))).toMatchObject({ code: 'BUSY' });
    // Refused without waiting for the minute the line allows.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(line.stats()).toMatchObject({ inFlight: 1, waiting: 1, rejected: 1 });
    inFlight.end();
    await Promise.all(calls);
  });

  it('gives a place taken with enter() back once, however often its release is called', async () => {
    const bulkhead = new Bulkhead('test', { limit: 2, maxWaitMs: 0 });
    const leave = await bulkhead.enter();
    const other = await bulkhead.enter();
    leave();
    leave();
    expect(bulkhead.stats().inFlight).toBe(1);
    other();
    expect(bulkhead.stats().inFlight).toBe(0);
  });
});

/**
 * Through the API: the sandbox bulkhead set to one call, a 100 ms wait. A payout to the 3 s account
 * is in flight; another payout waits its 100 ms, then answers 503 BUSY with Retry-After, holding
 * and recording nothing and leaving its Idempotency-Key free, so the same request goes through
 * once the first has finished.
 */
describe('a payout beyond its provider’s bulkhead', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ config: { PROVIDER_CONCURRENCY_SANDBOX: 1, PROVIDER_QUEUE_WAIT_MS: 100 } });
  });
  afterAll(() => s.t.close());

  it('answers 503 BUSY with Retry-After on REST and GraphQL, moves no money, and counts the refusals', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const sandbox = s.t.services.bulkheads.of('sandbox');
    const before = MetricsText.parse(await s.t.app.metricsText()).sum('gateway_provider_calls_rejected_total', {
      provider: 'sandbox',
    });
    const slow = call('POST', '/api/v1/wallet/withdraw', {
      amount: 100,
      bankCode: '044',
      accountNumber: SANDBOX_PAYMENTS.payouts.slowAccount,
      reference: 'BH-SLOW',
    });
    // In the bulkhead and its money held: the place is taken before the hold's commit, and on a busy
    // machine the balance read below could otherwise come between the two.
    await waitUntil(async () => sandbox.stats().inFlight === 1 && (await balanceOf(s.t, tenant)).heldKobo === 12_500);

    const body = { amount: 200, bankCode: '044', accountNumber: '0690000040', reference: 'BH-BUSY' };
    const refused = await call('POST', '/api/v1/wallet/withdraw', body, { 'idempotency-key': 'bh-busy' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable', errorCode: 'BUSY' });
    expect(refused.json().message).toMatch(/sandbox provider/);
    const viaGraph = await graphql(
      s.t.app,
      tenant.keys.TRANSACTIONS,
      'mutation { withdraw(input: { amount: 300, bankCode: "044", accountNumber: "0690000040" }) { reference } }',
    );
    expect(viaGraph.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BUSY',
      retryAfter: 1,
      http: { status: 503 },
    });
    // Only the payout in flight holds money; the refused ones recorded nothing.
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 100_000 - 12_500, heldKobo: 12_500 });
    expect((await call('GET', '/api/v1/wallet/payouts/BH-BUSY')).statusCode).toBe(404);
    const metrics = MetricsText.parse(await s.t.app.metricsText());
    expect(metrics.sum('gateway_provider_calls_rejected_total', { provider: 'sandbox' })).toBe(before + 2);
    expect(metrics.sum('gateway_provider_calls_in_flight', { provider: 'sandbox' })).toBe(1);
    expect(metrics.sum('gateway_provider_calls_limit', { provider: 'sandbox' })).toBe(1);

    expect((await slow).json().data.status).toBe('completed');
    const retried = await call('POST', '/api/v1/wallet/withdraw', body, { 'idempotency-key': 'bh-busy' });
    expect(retried.statusCode).toBe(201);
    expect(retried.json().data).toMatchObject({ reference: 'BH-BUSY', status: 'completed' });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 100_000 - 12_500 - 22_500, heldKobo: 0 });
    expect(sandbox.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });
});

/**
 * A provider that answers only when the test lets it: the first `blocking` calls wait for `release`,
 * later ones go straight through (so, without a bulkhead, a call past the limit would answer at once).
 */
function blockingFirst<A extends unknown[], R>(blocking: number, call: (...args: A) => Promise<R>) {
  const gate = held();
  let calls = 0;
  return {
    fake: async (...args: A): Promise<R> => {
      if (++calls <= blocking) await gate.ended;
      return call(...args);
    },
    calls: () => calls,
    release: gate.end,
  };
}

/** Rows of an owner's table, and its idempotency keys of one key, straight from the database. */
async function countOf(t: StartedTestApp['t'], table: 'bill_records' | 'deposits', userId: string): Promise<number> {
  const { rows } = (await t.services.db.execute(
    sql`select count(*)::int as n from ${sql.identifier(table)} where user_id = ${userId}`,
  )) as unknown as { rows: Array<{ n: number }> };
  return rows[0]!.n;
}
async function keysNamed(t: StartedTestApp['t'], userId: string, key: string): Promise<number> {
  const { rows } = (await t.services.db.execute(
    sql`select count(*)::int as n from idempotency_keys where user_id = ${userId} and key = ${key}`,
  )) as unknown as { rows: Array<{ n: number }> };
  return rows[0]!.n;
}

/**
 * Bills and deposits take their place in the same bulkhead as payouts: the sandbox's set to two
 * calls, a 100 ms wait. Two calls are held at the provider; the third waits its 100 ms, then answers
 * 503 BUSY with Retry-After having claimed no key, held no money and recorded nothing, and the same
 * request with the same Idempotency-Key goes through once the two have finished.
 */
describe('bills and deposits beyond their provider’s bulkhead', () => {
  const LIMIT = 2;
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ config: { PROVIDER_CONCURRENCY_SANDBOX: LIMIT, PROVIDER_QUEUE_WAIT_MS: 100 } });
  });
  afterAll(() => s.t.close());
  afterEach(() => vi.restoreAllMocks());

  it('a bill payment past the limit answers 503 BUSY with Retry-After, holding, recording and claiming nothing; its retry pays', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const sandbox = s.t.services.bulkheads.of('sandbox');
    const provider = s.t.services.billsProvider('sandbox');
    const blocked = blockingFirst(LIMIT, provider.pay.bind(provider));
    vi.spyOn(provider, 'pay').mockImplementation(blocked.fake);
    const airtime = (reference: string, amount: number) => ({
      phoneNumber: '08031234567',
      biller: 'mtn',
      amount,
      reference,
    });

    const inFlight = [1, 2].map((n) => call('POST', '/api/v1/bills/buy-airtime', airtime(`BH-BILL-${n}`, 100)));
    // Both at the provider, their money held (the place comes before the hold's commit).
    await waitUntil(
      async () => blocked.calls() === LIMIT && (await balanceOf(s.t, tenant)).heldKobo === LIMIT * 10_000,
    );
    expect(sandbox.stats()).toMatchObject({ inFlight: LIMIT, waiting: 0 });

    const body = airtime('BH-BILL-BUSY', 300);
    const refused = await call('POST', '/api/v1/bills/buy-airtime', body, { 'idempotency-key': 'bh-bill-busy' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable', errorCode: 'BUSY' });
    expect(refused.json().message).toMatch(/sandbox provider/);
    // Never sent, nothing held for it, no record, no key.
    expect(blocked.calls()).toBe(LIMIT);
    expect(await balanceOf(s.t, tenant)).toMatchObject({
      availableKobo: 100_000 - LIMIT * 10_000,
      heldKobo: LIMIT * 10_000,
    });
    expect((await call('GET', '/api/v1/bills/records/reference/BH-BILL-BUSY')).statusCode).toBe(404);
    expect(await countOf(s.t, 'bill_records', tenant.user.id)).toBe(LIMIT);
    expect(await keysNamed(s.t, tenant.user.id, 'bh-bill-busy')).toBe(0);

    blocked.release();
    for (const response of await Promise.all(inFlight)) expect(response.json().data.status).toBe('SUCCESS');
    const retried = await call('POST', '/api/v1/bills/buy-airtime', body, { 'idempotency-key': 'bh-bill-busy' });
    expect(retried.statusCode).toBe(201);
    expect(retried.json().data).toMatchObject({ reference: 'BH-BILL-BUSY', status: 'SUCCESS' });
    expect(await balanceOf(s.t, tenant)).toMatchObject({
      availableKobo: 100_000 - LIMIT * 10_000 - 30_000,
      heldKobo: 0,
    });
    expect(sandbox.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('a card deposit past the limit answers 503 BUSY with Retry-After, recording and claiming nothing; its retry is credited', async () => {
    const tenant = await seedTenant(s.t.services);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: {
        number: SANDBOX_PAYMENTS.cards.noAuth,
        expMonth: 9,
        expYear: new Date().getUTCFullYear() + 3,
        cvv: '564',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const paymentMethodId = created.json().data.id;
    const sandbox = s.t.services.bulkheads.of('sandbox');
    const provider = s.t.services.paymentsProvider('sandbox');
    const blocked = blockingFirst(LIMIT, provider.chargeCard.bind(provider));
    vi.spyOn(provider, 'chargeCard').mockImplementation(blocked.fake);
    const deposit = (reference: string, amount: number) => ({ amount, paymentMethodId, reference, currency: 'NGN' });

    const inFlight = [1, 2].map((n) =>
      call('POST', '/api/v1/wallet/deposit/payment-method', deposit(`BH-DEP-${n}`, 100)),
    );
    await waitUntil(
      async () => blocked.calls() === LIMIT && (await countOf(s.t, 'deposits', tenant.user.id)) === LIMIT,
    );
    expect(sandbox.stats()).toMatchObject({ inFlight: LIMIT, waiting: 0 });

    const body = deposit('BH-DEP-BUSY', 300);
    const refused = await call('POST', '/api/v1/wallet/deposit/payment-method', body, {
      'idempotency-key': 'bh-dep-busy',
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable', errorCode: 'BUSY' });
    // Never charged, no money moved, no deposit, no key.
    expect(blocked.calls()).toBe(LIMIT);
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 0, heldKobo: 0 });
    expect((await call('GET', '/api/v1/wallet/deposits/BH-DEP-BUSY')).statusCode).toBe(404);
    expect(await countOf(s.t, 'deposits', tenant.user.id)).toBe(LIMIT);
    expect(await keysNamed(s.t, tenant.user.id, 'bh-dep-busy')).toBe(0);

    blocked.release();
    for (const response of await Promise.all(inFlight)) expect(response.json().data.status).toBe('COMPLETED');
    const retried = await call('POST', '/api/v1/wallet/deposit/payment-method', body, {
      'idempotency-key': 'bh-dep-busy',
    });
    expect(retried.statusCode).toBe(201);
    expect(retried.json().data).toMatchObject({ reference: 'BH-DEP-BUSY', status: 'COMPLETED' });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: LIMIT * 10_000 + 30_000, heldKobo: 0 });
    expect(sandbox.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });
});
