import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { BillsProvider } from '../../src/domain/bills/bills-provider.js';
import type { PaymentsProvider } from '../../src/domain/payments/payments-provider.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';
import { principalOf } from '../helpers/principal.js';

const airtime = { type: 'AIRTIME' as const, biller: 'MTN', customer: '08031234567', amount: 100 };

/**
 * The settling writes of a bill, a payout and a deposit reach their wallet transaction by primary
 * key: the hold (a bill's, a payout's) or the deposit names it. Rows written before that link existed have it null and
 * are still found by the owner's reference.
 */
describe('settling writes reach the wallet transaction by id', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const transactionOf = async (userId: string, reference: string) => {
    const [row] = await queryRows<{ id: string; status: string; version: number }>(
      t.services.db,
      sql`select id, status::text as status, version from wallet_transactions
          where user_id = ${userId} and reference = ${reference}`,
    );
    return row!;
  };

  /**
   * Changes the reference of the owner's PENDING transactions: run between an operation's two
   * statements (inside its provider call), it leaves the id as the only way to the transaction.
   */
  const movePendingReferences = (userId: string) =>
    t.services.db.execute(
      sql`update wallet_transactions set reference = reference || '-moved'
          where user_id = ${userId} and status = 'PENDING'`,
    );

  /**
   * Runs `operate` with the provider's `method` first moving the owner's PENDING references (see
   * movePendingReferences), and puts the method back whatever happens.
   */
  async function withReferencesMovedIn<P extends object, R>(
    provider: P,
    method: keyof P & string,
    userId: string,
    operate: () => Promise<R>,
  ): Promise<R> {
    const original = provider[method] as (...args: unknown[]) => Promise<unknown>;
    (provider as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      await movePendingReferences(userId);
      return original.apply(provider, args);
    };
    try {
      return await operate();
    } finally {
      (provider as Record<string, unknown>)[method] = original;
    }
  }

  /** The captured hold names the transaction, which completed although its reference moved. */
  async function expectSettledThroughHold(userId: string, reference: string, holdId: string | null) {
    const transaction = await transactionOf(userId, `${reference}-moved`);
    expect(transaction).toMatchObject({ status: 'COMPLETED', version: 2 });
    const [hold] = await queryRows<{ transaction_id: string | null; status: string }>(
      t.services.db,
      sql`select transaction_id, status::text as status from ledger_holds where id = ${holdId}`,
    );
    expect(hold).toEqual({ transaction_id: transaction.id, status: 'captured' });
  }

  for (const [how, input] of [
    ['in two statements', airtime],
    // Saving a beneficiary opens the bill through a transaction of separate statements.
    [
      'through separate statements (a beneficiary saved)',
      { ...airtime, saveBeneficiary: true, beneficiaryName: 'Ada' },
    ],
  ] as const)
    it(`a bill paid ${how}: its hold names the transaction, and the settle finds it by that id`, async () => {
      const tenant = await seedTenant(t.services);
      await fund(t, tenant, 1000);
      const provider = (t.services.bills as unknown as { providerFor(e: string): BillsProvider }).providerFor(
        'sandbox',
      );
      // Between the two statements the transaction's reference is changed, so only its id leads to it:
      // a settle by reference would leave it PENDING.
      const paid = await withReferencesMovedIn(provider, 'pay', tenant.user.id, () =>
        t.services.bills.pay(principalOf(tenant.user.id), input, undefined),
      );
      expect(paid.status).toBe('SUCCESS');
      await expectSettledThroughHold(tenant.user.id, paid.reference, paid.holdId);
    });

  it("a scheduled bill's run: the hold placed when it runs names the transaction, and the settle finds it by that id", async () => {
    const tenant = await seedTenant(t.services);
    await fund(t, tenant, 1000);
    const principal = principalOf(tenant.user.id);
    const executionDate = new Date(Date.now() + 86_400_000).toISOString();
    await t.services.bills.pay(principal, { ...airtime, isSchedule: true, scheduleData: { executionDate } }, undefined);
    const [schedule] = await t.services.bills.schedules(principal);
    const provider = (t.services.bills as unknown as { providerFor(e: string): BillsProvider }).providerFor('sandbox');
    // The run holds the money (holdScheduled), then calls the provider, which moves the reference.
    const paid = await withReferencesMovedIn(provider, 'pay', tenant.user.id, () =>
      t.services.bills.runSchedule(schedule!.id, 1),
    );
    expect(paid?.status).toBe('SUCCESS');
    await expectSettledThroughHold(tenant.user.id, paid!.reference, paid!.holdId);
  });

  it('a payout: its hold names the transaction, and the settle finds it by that id', async () => {
    const tenant = await seedTenant(t.services);
    await fund(t, tenant, 5000);
    const provider = (t.services.payouts as unknown as { providerFor(e: string): PaymentsProvider }).providerFor(
      'sandbox',
    );
    const paid = await withReferencesMovedIn(provider, 'transfer', tenant.user.id, () =>
      t.services.payouts.withdraw(
        principalOf(tenant.user.id),
        { amount: 1000, bankCode: '044', accountNumber: '0690000040', narration: 'rent' },
        undefined,
      ),
    );
    expect(paid.status).toBe('completed');
    await expectSettledThroughHold(tenant.user.id, paid.reference, paid.holdId);
  });

  describe('a bank-transfer deposit', () => {
    let provider: PaymentsProvider;
    let original: PaymentsProvider['bankTransferAccount'];
    beforeAll(() => {
      provider = (t.services.deposits as unknown as { providerFor(e: string): PaymentsProvider }).providerFor(
        'sandbox',
      );
      original = provider.bankTransferAccount;
    });

    it('keeps the transaction it opened, and moves it by that id', async () => {
      const tenant = await seedTenant(t.services);
      // As for the bill: between the statements only the id still leads to the transaction.
      const started = await withReferencesMovedIn(provider, 'bankTransferAccount', tenant.user.id, () =>
        t.services.deposits.bankTransfer(principalOf(tenant.user.id), { amount: 100 }, undefined),
      );
      expect(started.status).toBe('pending');
      const transaction = await transactionOf(tenant.user.id, `${started.reference}-moved`);
      expect(transaction).toMatchObject({ status: 'PENDING', version: 2 });
      const [deposit] = await queryRows<{ transaction_id: string | null }>(
        t.services.db,
        sql`select transaction_id from deposits where id = ${started.id}`,
      );
      expect(deposit!.transaction_id).toBe(transaction.id);
    });

    it('opened without the link (before it existed), still moves its transaction, found by reference', async () => {
      const tenant = await seedTenant(t.services);
      // The provider call runs between the two statements: the link is taken away there, as a row
      // written before the column would have it.
      provider.bankTransferAccount = async (request) => {
        await t.services.db.execute(
          sql`update deposits set transaction_id = null where id = ${request.reference.replace(/^pgw-/, '')}::uuid`,
        );
        return original.call(provider, request);
      };
      try {
        const started = await t.services.deposits.bankTransfer(principalOf(tenant.user.id), { amount: 100 }, undefined);
        expect(started.status).toBe('pending');
        const [deposit] = await queryRows<{ transaction_id: string | null }>(
          t.services.db,
          sql`select transaction_id from deposits where id = ${started.id}`,
        );
        expect(deposit!.transaction_id).toBeNull();
        expect(await transactionOf(tenant.user.id, started.reference)).toMatchObject({ status: 'PENDING', version: 2 });
        const types = await queryRows<{ type: string }>(
          t.services.db,
          sql`select type from events where user_id = ${tenant.user.id} order by ordinal`,
        );
        expect(types.map((row) => row.type)).toContain('transaction.updated');
      } finally {
        provider.bankTransferAccount = original;
      }
    });
  });
});
