import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/principal.js';
import { DomainError } from '../../src/domain/errors.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';

/** Races need real concurrent connections: PostgreSQL only (PGlite runs one transaction at a time). */
describe.skipIf(!onPostgres)('wallet under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  async function fundDirectly(userId: string, kobo: bigint) {
    await t.services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test-funding',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -kobo },
          { account: walletOf('sandbox', userId), amount: kobo },
        ],
      }),
    );
  }

  it('1,000 concurrent debits of 1,000 kobo against 100,000 kobo: exactly 100 succeed, the balance ends at 0, the ledger sums to zero', async () => {
    const payer = await seedTenant(t.services);
    const payee = await seedTenant(t.services);
    await fundDirectly(payer.user.id, 100_000n);
    const results = await Promise.allSettled(
      Array.from({ length: 1000 }, (_, i) =>
        t.services.wallet.transfer(
          principalOf(payer.user.id),
          { amount: 10, recipient: payee.user.id, reference: `race-${i}` },
          undefined,
        ),
      ),
    );
    const succeeded = results.filter((r) => r.status === 'fulfilled').length;
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(succeeded).toBe(100);
    expect(failures).toHaveLength(900);
    expect(failures.every((e) => e instanceof DomainError && e.code === 'INSUFFICIENT_FUNDS')).toBe(true);
    expect(await ledger.balances(t.services.db, 'sandbox', payer.user.id)).toEqual({ available: 0n, held: 0n });
    expect(await ledger.balances(t.services.db, 'sandbox', payee.user.id)).toEqual({ available: 100_000n, held: 0n });
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
    const page = await t.services.wallet.transactions(principalOf(payer.user.id), { type: 'TRANSFER_OUT' }, 1, 1);
    expect(page.total).toBe(100);
  });

  it('concurrent payouts and transfers from one wallet never overdraw it', async () => {
    const payer = await seedTenant(t.services);
    const payee = await seedTenant(t.services);
    await fundDirectly(payer.user.id, 50_000n);
    const principal = principalOf(payer.user.id);
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 === 0
          ? t.services.payouts.withdraw(
              principal,
              { amount: 75, bankCode: '044', accountNumber: '0690000040', reference: `po-race-${i}` },
              undefined,
            )
          : t.services.wallet.transfer(
              principal,
              { amount: 100, recipient: payee.user.id, reference: `tr-race-${i}` },
              undefined,
            ),
      ),
    );
    const balances = await ledger.balances(t.services.db, 'sandbox', payer.user.id);
    expect(balances.available).toBeGreaterThanOrEqual(0n);
    expect(balances.held).toBe(0n);
    const payouts = results.filter((r, i) => i % 2 === 0 && r.status === 'fulfilled').length;
    const transfers = results.filter((r, i) => i % 2 === 1 && r.status === 'fulfilled').length;
    expect(50_000n - BigInt(payouts) * 10_000n - BigInt(transfers) * 10_000n).toBe(balances.available);
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
  });

  it('the same Idempotency-Key sent 20 times at once moves money once', async () => {
    const payer = await seedTenant(t.services);
    const payee = await seedTenant(t.services);
    await fundDirectly(payer.user.id, 10_000n);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        t.services.wallet.transfer(principalOf(payer.user.id), { amount: 10, recipient: payee.user.id }, 'same-key'),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled') as Array<PromiseFulfilledResult<{ id: string }>>;
    expect(new Set(ok.map((r) => r.value.id)).size).toBe(1);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.every((r) => r.reason instanceof DomainError && r.reason.code === 'CONFLICT')).toBe(true);
    expect(await ledger.balances(t.services.db, 'sandbox', payee.user.id)).toEqual({ available: 1000n, held: 0n });
  });
});

describe.skipIf(!onPostgres)('payment methods under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('six concurrent first payment methods all succeed and exactly one is the default', async () => {
    const tenant = await seedTenant(t.services);
    const principal: Principal = { ...principalOf(tenant.user.id), abilities: new Set(['READ', 'MANAGE']) };
    const created = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.services.paymentMethods.create(principal, {
          type: 'card',
          card: { number: '5060990580000217499', expMonth: 9, expYear: new Date().getUTCFullYear() + 2, cvv: '123' },
        }),
      ),
    );
    expect(created).toHaveLength(6);
    const listed = await t.services.paymentMethods.list(principal);
    expect(listed.filter((m) => m.isDefault)).toHaveLength(1);
    // Concurrent default changes still leave exactly one.
    await Promise.all(listed.map((m) => t.services.paymentMethods.setDefault(principal, m.id)));
    expect((await t.services.paymentMethods.list(principal)).filter((m) => m.isDefault)).toHaveLength(1);
  });
});

describe.skipIf(!onPostgres)('bills under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  it('30 concurrent ₦100 airtime purchases against ₦2,000 pay exactly 20 and hold nothing after', async () => {
    const tenant = await seedTenant(t.services);
    const principal = principalOf(tenant.user.id);
    await t.services.deposits.simulateVirtualAccountTransfer(principal, 2000);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        t.services.bills.pay(
          principal,
          { type: 'AIRTIME', biller: 'MTN', customer: '08031234567', amount: 100, reference: `B-RACE-${i}` },
          undefined,
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled' && r.value.status === 'SUCCESS')).toHaveLength(20);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(10);
    expect(refused.every((r) => r.reason instanceof DomainError && r.reason.code === 'INSUFFICIENT_FUNDS')).toBe(true);
    expect(await ledger.balances(t.services.db, 'sandbox', tenant.user.id)).toEqual({ available: 0n, held: 0n });
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
  });
});
