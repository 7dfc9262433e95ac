import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { startTestApp, type StartedTestApp } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

describe('payout controls: cooling-off for a newly added bank account', () => {
  let s: StartedTestApp;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    s = await startTestApp({
      clock,
      config: {
        PAYOUT_COOLING_OFF_SANDBOX: true,
        PAYOUT_COOLING_OFF_MINUTES: 60,
        PAYOUT_COOLING_OFF_CAP_KOBO: 500_000,
        RATE_LIMIT_PER_MINUTE: 100_000,
      },
    });
    await fund(s.t, s.tenant, 50_000);
  });
  afterAll(() => s.t.close());

  it('refuses a payout above the cap to an account added a minute ago, with the documented 403, until the period passes', async () => {
    const call = rest(s.t, s.tenant.keys.FULL_ACCESS);
    const added = await s.t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': s.tenant.keys.FULL_ACCESS },
      payload: {
        query:
          'mutation { createPaymentMethod(input: { type: bank_account, bankAccount: { bankCode: "044", accountNumber: "0690000040" } }) { id } }',
      },
    });
    expect(added.json().errors).toBeUndefined();
    clock.advance(60_000);

    const refused = await call('POST', '/api/v1/wallet/withdraw', {
      amount: 5000.01,
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect(refused.json().message).toMatch(/^Limit payout_destination_cooling_off: .* at most ₦5000\.00 until /);
    // Nothing was held.
    expect((await call('GET', '/api/v1/wallet/balance')).json().data.heldKobo).toBe(0);

    const small = await call('POST', '/api/v1/wallet/withdraw', {
      amount: 5000,
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expect(small.statusCode).toBe(201);

    // An account never seen before is "added" now: the same refusal.
    const unseen = await call('POST', '/api/v1/wallet/withdraw', {
      amount: 6000,
      bankCode: '058',
      accountNumber: '0123456789',
    });
    expect(unseen.statusCode).toBe(403);

    clock.advance(60 * 60_000);
    const later = await call('POST', '/api/v1/wallet/withdraw', {
      amount: 6000,
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expect(later.statusCode).toBe(201);
  });

  it('counts every payout to a cooling-off account: splitting under the cap, in turn or at once, stops at the cap', async () => {
    const call = rest(s.t, s.tenant.keys.FULL_ACCESS);
    const to = { bankCode: '057', accountNumber: '2233445566' };
    const first = await call('POST', '/api/v1/wallet/withdraw', { amount: 3000, ...to });
    expect(first.statusCode).toBe(201);
    // ₦3,000 already went; two more of ₦1,500 at once: only one fits under ₦5,000.
    const [a, b] = await Promise.all([
      call('POST', '/api/v1/wallet/withdraw', { amount: 1500, ...to }),
      call('POST', '/api/v1/wallet/withdraw', { amount: 1500, ...to }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([201, 403]);
  });
});
