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
      const original = provider.pay;
      // Between the two statements the transaction's reference is changed, so only its id leads to it:
      // a settle by reference would leave it PENDING.
      provider.pay = async (input) => {
        await movePendingReferences(tenant.user.id);
        return original.call(provider, input);
      };
      let paid: Awaited<ReturnType<typeof t.services.bills.pay>>;
      try {
        paid = await t.services.bills.pay(principalOf(tenant.user.id), input, undefined);
      } finally {
        provider.pay = original;
      }
      expect(paid.status).toBe('SUCCESS');
      const transaction = await transactionOf(tenant.user.id, `${paid.reference}-moved`);
      expect(transaction).toMatchObject({ status: 'COMPLETED', version: 2 });
      const [hold] = await queryRows<{ transaction_id: string | null; status: string }>(
        t.services.db,
        sql`select transaction_id, status::text as status from ledger_holds where id = ${paid.holdId}`,
      );
      expect(hold).toEqual({ transaction_id: transaction.id, status: 'captured' });
    });

  it('a payout: its hold names the transaction, and the settle finds it by that id', async () => {
    const tenant = await seedTenant(t.services);
    await fund(t, tenant, 5000);
    const provider = (t.services.payouts as unknown as { providerFor(e: string): PaymentsProvider }).providerFor(
      'sandbox',
    );
    const original = provider.transfer;
    provider.transfer = async (request) => {
      await movePendingReferences(tenant.user.id);
      return original.call(provider, request);
    };
    let paid: Awaited<ReturnType<typeof t.services.payouts.withdraw>>;
    try {
      paid = await t.services.payouts.withdraw(
        principalOf(tenant.user.id),
        { amount: 1000, bankCode: '044', accountNumber: '0690000040', narration: 'rent' },
        undefined,
      );
    } finally {
      provider.transfer = original;
    }
    expect(paid.status).toBe('completed');
    const transaction = await transactionOf(tenant.user.id, `${paid.reference}-moved`);
    expect(transaction).toMatchObject({ status: 'COMPLETED', version: 2 });
    const [hold] = await queryRows<{ transaction_id: string | null; status: string }>(
      t.services.db,
      sql`select transaction_id, status::text as status from ledger_holds where id = ${paid.holdId}`,
    );
    expect(hold).toEqual({ transaction_id: transaction.id, status: 'captured' });
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
      provider.bankTransferAccount = async (request) => {
        await movePendingReferences(tenant.user.id);
        return original.call(provider, request);
      };
      let started: Awaited<ReturnType<typeof t.services.deposits.bankTransfer>>;
      try {
        started = await t.services.deposits.bankTransfer(principalOf(tenant.user.id), { amount: 100 }, undefined);
      } finally {
        provider.bankTransferAccount = original;
      }
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
