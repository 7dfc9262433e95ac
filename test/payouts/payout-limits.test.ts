import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyControlsCommand } from '../../scripts/admin/controls-commands.js';
import { NO_CONTROLS } from '../../src/domain/auth/key-controls.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { effectiveLimits, payoutLimitDefaultsOf } from '../../src/domain/payouts/payout-limits.js';
import { ManualClock } from '../../src/domain/clock.js';
import { graphql, type StartedTestApp, seedTenant, startTestApp, type Tenant } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

/** The id of one of the tenant's keys, by the name seedTenant gives it. */
async function keyId(s: StartedTestApp, tenant: Tenant, name: string): Promise<string> {
  return (await s.t.services.apiKeys.list(tenant.user.id)).find((k) => k.name === name)!.id;
}

const to = (n: number) => ({ bankCode: '044', accountNumber: `06900000${String(n).padStart(2, '0')}` });

describe('payout controls: per-key amount and velocity limits', () => {
  let s: StartedTestApp;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    s = await startTestApp({
      clock,
      config: { PAYOUT_COOLING_OFF_MINUTES: 0, RATE_LIMIT_PER_MINUTE: 100_000 },
    });
  });
  afterAll(() => s.t.close());

  /** A fresh funded tenant whose Full Access sandbox key has the given limits. */
  async function tenantWith(limits: Partial<typeof NO_CONTROLS>, naira = 100_000) {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, naira);
    const id = await keyId(s, tenant, 'FULL_ACCESS sandbox');
    await s.t.services.keyControls.set(tenant.user.id, id, { ...NO_CONTROLS, ...limits });
    return { tenant, call: rest(s.t, tenant.keys.FULL_ACCESS) };
  }

  it('refuses a payout over the per-payout limit with 403 naming the limit, on REST and GraphQL, holding nothing', async () => {
    const { tenant, call } = await tenantWith({ maxPayoutKobo: 500_000n });
    const refused = await call('POST', '/api/v1/wallet/withdraw', { amount: 5000.01, ...to(1) });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      statusCode: 403,
      error: 'Forbidden',
      errorCode: 'PAYOUT_LIMIT_EXCEEDED',
      limit: { name: 'max_per_payout', value: '500000' },
      details: [{ field: 'amount' }],
    });
    expect(refused.json().message).toBe('Limit max_per_payout: this key may send at most ₦5000.00 per payout.');
    expect((await call('GET', '/api/v1/wallet/balance')).json().data.heldKobo).toBe(0);
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 5000, ...to(1) })).statusCode).toBe(201);

    const viaGraph = await graphql(
      s.t.app,
      tenant.keys.FULL_ACCESS,
      'mutation { withdraw(input: { amount: 6000, bankCode: "044", accountNumber: "0690000001" }) { reference } }',
    );
    expect(viaGraph.body.errors?.[0]?.extensions).toMatchObject({
      code: 'PAYOUT_LIMIT_EXCEEDED',
      field: 'amount',
      limit: { name: 'max_per_payout', value: '500000' },
    });
  });

  it('answers 429 with Retry-After once the day’s total is reached, frees as the window moves', async () => {
    const { tenant, call } = await tenantWith({ maxDailyKobo: 1_000_000n });
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 6000, ...to(2) })).statusCode).toBe(201);
    clock.advance(3_600_000);
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 4000, ...to(2) })).statusCode).toBe(201);
    clock.advance(60_000);
    const over = await call('POST', '/api/v1/wallet/withdraw', { amount: 1, ...to(2) });
    expect(over.statusCode).toBe(429);
    // The first payout (₦6,000) leaves the 24-hour window 22 h 59 min from now.
    const wait = 24 * 3600 - 3600 - 60;
    expect(over.headers['retry-after']).toBe(String(wait));
    expect(over.json()).toEqual({
      statusCode: 429,
      message: `Limit max_total_per_day: this key may make payouts totalling at most ₦10000.00 in 24 hours. Retry after ${wait} seconds.`,
      retryAfter: wait,
      errorCode: 'PAYOUT_VELOCITY_EXCEEDED',
      limit: { name: 'max_total_per_day', value: '1000000' },
    });
    const viaGraph = await graphql(
      s.t.app,
      tenant.keys.FULL_ACCESS,
      'mutation { withdraw(input: { amount: 1, bankCode: "044", accountNumber: "0690000002" }) { reference } }',
    );
    expect(viaGraph.body.errors?.[0]?.extensions).toMatchObject({
      code: 'PAYOUT_VELOCITY_EXCEEDED',
      retryAfter: wait,
      limit: { name: 'max_total_per_day' },
    });
    // Another key of the same user has its own budget (the limits are per key).
    const other = rest(s.t, tenant.keys.TRANSACTIONS);
    expect((await other('POST', '/api/v1/wallet/withdraw', { amount: 1, ...to(2) })).statusCode).toBe(201);

    // One second early the window has not freed; at Retry-After it has.
    clock.advance((wait - 1) * 1000);
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 1, ...to(2) })).statusCode).toBe(429);
    clock.advance(1000);
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 1, ...to(2) })).statusCode).toBe(201);
  });

  it('stops counting a payout the provider failed (its money was released)', async () => {
    const { call } = await tenantWith({ maxDailyKobo: 1_000_000n });
    const failing = await call('POST', '/api/v1/wallet/withdraw', {
      amount: 6000,
      bankCode: '044',
      accountNumber: '0000000000',
    });
    expect(failing.json().data.status).toBe('failed');
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 10_000, ...to(2) })).statusCode).toBe(201);
  });

  it('limits the number of payouts per hour and per day, each answer naming its limit', async () => {
    const { call } = await tenantWith({ maxHourlyCount: 2, maxDailyCount: 3 });
    for (let i = 0; i < 2; i++)
      expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 10, ...to(3) })).statusCode).toBe(201);
    const retried = { 'idempotency-key': `hourly-${Date.now()}` };
    const hourly = await call('POST', '/api/v1/wallet/withdraw', { amount: 10, ...to(3) }, retried);
    expect(hourly.statusCode).toBe(429);
    expect(hourly.json().limit).toEqual({ name: 'max_payouts_per_hour', value: 2 });
    expect(Number(hourly.headers['retry-after'])).toBe(3600);
    clock.advance(3_600_000);
    // A 429 is not the key's stored answer: the same request with the same key goes through once the window frees.
    expect((await call('POST', '/api/v1/wallet/withdraw', { amount: 10, ...to(3) }, retried)).statusCode).toBe(201);
    const daily = await call('POST', '/api/v1/wallet/withdraw', { amount: 10, ...to(3) });
    expect(daily.statusCode).toBe(429);
    expect(daily.json().limit).toEqual({ name: 'max_payouts_per_day', value: 3 });
    expect(Number(daily.headers['retry-after'])).toBe(23 * 3600);
  });

  it('lets concurrent payouts of one key through only up to the daily total, all together', async () => {
    const { call } = await tenantWith({ maxDailyKobo: 500_000n });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => call('POST', '/api/v1/wallet/withdraw', { amount: 1000, ...to(4) })),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(5);
    expect(codes.filter((c) => c === 429)).toHaveLength(7);
  });

  it('gives production keys the configured defaults, sandbox keys only when asked; a key’s own value wins', () => {
    const defaults = payoutLimitDefaultsOf(s.t.services.config);
    const principal = (environment: 'sandbox' | 'production') =>
      ({ kind: 'api_key', credentialId: 'k', userId: 'u', environment, abilities: new Set() }) as Principal;
    expect(effectiveLimits(principal('production'), NO_CONTROLS, defaults)).toEqual({
      maxPayoutKobo: 500_000_000n,
      maxDailyKobo: 2_000_000_000n,
      maxDailyCount: 500,
      maxHourlyCount: 100,
    });
    expect(effectiveLimits(principal('sandbox'), NO_CONTROLS, defaults)).toEqual({
      maxPayoutKobo: 0n,
      maxDailyKobo: 0n,
      maxDailyCount: 0,
      maxHourlyCount: 0,
    });
    expect(effectiveLimits(principal('sandbox'), NO_CONTROLS, { ...defaults, sandbox: true }).maxDailyCount).toBe(500);
    const own = { ...NO_CONTROLS, maxPayoutKobo: 0n, maxDailyCount: 7 };
    expect(effectiveLimits(principal('production'), own, defaults)).toMatchObject({
      maxPayoutKobo: 0n,
      maxDailyCount: 7,
      maxHourlyCount: 100,
    });
  });
});

describe('admin CLI: key-controls', () => {
  it('shows a key’s controls, changes only the ones given, and refuses another user’s key', async () => {
    const s = await startTestApp();
    try {
      const id = await keyId(s, s.tenant, 'FULL_ACCESS sandbox');
      const shown = await keyControlsCommand(s.t.services, s.tenant.user.id, id, {});
      expect(shown.text).toContain('per payout:           default');
      const changed = await keyControlsCommand(s.t.services, s.tenant.user.id, id, {
        maxPayout: '2500',
        ipAllowList: '198.51.100.0/24',
      });
      expect(changed.json).toEqual({
        maxPayoutKobo: '250000',
        maxDailyKobo: null,
        maxDailyCount: null,
        maxHourlyCount: null,
        ipAllowList: ['198.51.100.0/24'],
      });
      const again = await keyControlsCommand(s.t.services, s.tenant.user.id, id, { maxDailyCount: '0' });
      expect(again.text).toContain('per payout:           ₦2500.00');
      expect(again.text).toContain('payouts per 24 hours: no limit');
      const other = await seedTenant(s.t.services);
      await expect(keyControlsCommand(s.t.services, other.user.id, id, {})).rejects.toThrow(/not found/);
    } finally {
      await s.t.close();
    }
  });
});
