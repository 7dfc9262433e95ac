import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { PAYOUT_FEE_KOBO } from '../../src/domain/wallet/payout-service.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { principalOf } from '../helpers/principal.js';

describe('the ledger', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('refuses unbalanced postings, posts a kind and reference once, and never lets an entry change', async () => {
    const { user } = await seedTenant(t.services);
    const reference = crypto.randomUUID();
    const lines = [
      { account: systemAccount('sandbox', 'provider_clearing'), amount: -500n },
      { account: walletOf('sandbox', user.id), amount: 500n },
    ];
    await expect(
      t.services.db.transaction((tx) =>
        ledger.post(tx, {
          environment: 'sandbox',
          kind: 'test',
          reference,
          lines: [lines[0]!, { ...lines[1]!, amount: 499n }],
        }),
      ),
    ).rejects.toThrow(/Unbalanced/);
    expect(
      await t.services.db.transaction((tx) =>
        ledger.post(tx, { environment: 'sandbox', kind: 'test', reference, lines }),
      ),
    ).toBe(true);
    expect(
      await t.services.db.transaction((tx) =>
        ledger.post(tx, { environment: 'sandbox', kind: 'test', reference, lines }),
      ),
    ).toBe(false);
    expect((await ledger.balances(t.services.db, 'sandbox', user.id)).available).toBe(500n);
    await expect(t.services.db.execute(sql`update ledger_entries set amount = amount + 1`)).rejects.toThrow();
    await expect(t.services.db.execute(sql`delete from ledger_entries`)).rejects.toThrow();
    await expect(t.services.db.execute(sql`delete from ledger_postings`)).rejects.toThrow();
  });

  it('captures or releases a hold at most once, and reverses a posting exactly', async () => {
    const { user } = await seedTenant(t.services);
    const owner = { environment: 'sandbox' as const, userId: user.id };
    await t.services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -1000n },
          { account: walletOf('sandbox', user.id), amount: 1000n },
        ],
      }),
    );
    const holdId = await t.services.db.transaction((tx) => ledger.hold(tx, owner, 600n, 'h1'));
    await expect(t.services.db.transaction((tx) => ledger.hold(tx, owner, 600n, 'h2'))).rejects.toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
    });
    expect(await ledger.balances(t.services.db, 'sandbox', user.id)).toEqual({ available: 400n, held: 600n });
    expect(await t.services.db.transaction((tx) => ledger.release(tx, holdId, new Date()))).toBe(true);
    expect(await t.services.db.transaction((tx) => ledger.release(tx, holdId, new Date()))).toBe(false);
    expect(await t.services.db.transaction((tx) => ledger.capture(tx, holdId, 0n, new Date()))).toBe(false);
    expect(await ledger.balances(t.services.db, 'sandbox', user.id)).toEqual({ available: 1000n, held: 0n });
    const other = await seedTenant(t.services);
    const transfer = await t.services.wallet.transfer(
      principalOf(user.id),
      { amount: 3, recipient: other.user.id },
      undefined,
    );
    const postingId = (await ledger.postingId(t.services.db, 'sandbox', 'transfer', transfer.id))!;
    expect(await t.services.db.transaction((tx) => ledger.reverse(tx, postingId))).toBe(true);
    expect(await t.services.db.transaction((tx) => ledger.reverse(tx, postingId))).toBe(false);
    expect((await ledger.balances(t.services.db, 'sandbox', user.id)).available).toBe(1000n);
    expect((await ledger.balances(t.services.db, 'sandbox', other.user.id)).available).toBe(0n);
  });

  it('keeps every balance equal to a simple model through random deposits, transfers, payouts and reversals', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('deposit' as const), user: fc.nat(2), naira: fc.integer({ min: 1, max: 500 }) }),
      fc.record({
        kind: fc.constant('transfer' as const),
        from: fc.nat(2),
        to: fc.nat(2),
        naira: fc.integer({ min: 1, max: 300 }),
      }),
      fc.record({
        kind: fc.constant('payout' as const),
        user: fc.nat(2),
        naira: fc.integer({ min: 1, max: 300 }),
        fails: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(50) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => {
        const users = await Promise.all([0, 1, 2].map(async () => (await seedTenant(t.services)).user.id));
        const model = new Map(users.map((u) => [u, 0n]));
        const transfers: Array<{ id: string; from: string; to: string; amount: bigint; reversed: boolean }> = [];
        for (const step of ops) {
          if (step.kind === 'deposit') {
            await t.services.deposits.simulateVirtualAccountTransfer(principalOf(users[step.user]!), step.naira);
            model.set(users[step.user]!, model.get(users[step.user]!)! + BigInt(step.naira) * 100n);
          } else if (step.kind === 'transfer') {
            const [from, to, amount] = [users[step.from]!, users[step.to]!, BigInt(step.naira) * 100n];
            const attempt = t.services.wallet.transfer(
              principalOf(from),
              { amount: step.naira, recipient: to },
              undefined,
            );
            if (from === to) {
              await expect(attempt).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
            } else if (model.get(from)! < amount) {
              await expect(attempt).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
            } else {
              const row = await attempt;
              transfers.push({ id: row.id, from, to, amount, reversed: false });
              model.set(from, model.get(from)! - amount);
              model.set(to, model.get(to)! + amount);
            }
          } else if (step.kind === 'payout') {
            const user = users[step.user]!;
            const amount = BigInt(step.naira) * 100n;
            const attempt = t.services.payouts.withdraw(
              principalOf(user),
              {
                amount: step.naira,
                bankCode: '044',
                accountNumber: step.fails ? SANDBOX_PAYMENTS.payouts.failingAccount : '0690000040',
              },
              undefined,
            );
            if (model.get(user)! < amount + PAYOUT_FEE_KOBO) {
              await expect(attempt).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
            } else {
              const payout = await attempt;
              expect(payout.status).toBe(step.fails ? 'failed' : 'completed');
              if (!step.fails) model.set(user, model.get(user)! - amount - PAYOUT_FEE_KOBO);
            }
          } else if (transfers.length > 0) {
            const target = transfers[step.pick % transfers.length]!;
            const postingId = (await ledger.postingId(t.services.db, 'sandbox', 'transfer', target.id))!;
            const attempt = t.services.db.transaction((tx) => ledger.reverse(tx, postingId));
            if (target.reversed) {
              expect(await attempt).toBe(false);
            } else if (model.get(target.to)! < target.amount) {
              await expect(attempt).rejects.toBeInstanceOf(DomainError);
            } else {
              expect(await attempt).toBe(true);
              target.reversed = true;
              model.set(target.to, model.get(target.to)! - target.amount);
              model.set(target.from, model.get(target.from)! + target.amount);
            }
          }
          for (const user of users) {
            const { available, held } = await ledger.balances(t.services.db, 'sandbox', user);
            expect({ available, held }).toEqual({ available: model.get(user)!, held: 0n });
          }
        }
        expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
      }),
      { numRuns: 12 },
    );
  });
});
