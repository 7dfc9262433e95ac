import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billStore } from '../../src/domain/bills/bill-store.js';
import { transactionStore } from '../../src/domain/wallet/transaction-store.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { expectExactTotals } from './list-totals-exact.js';

/**
 * The totals of bill records and wallet transactions by type and status are kept by triggers
 * (migration 0021) instead of counted; they must equal `count(*)` after every kind of write:
 * inserts, status and type changes, a row moving owner or environment, deletes, writes rolled
 * back, and updates that leave the counted columns alone.
 */
describe('list totals kept by the database stay exact', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    t = await createTestApp();
    a = await seedTenant(t.services);
    b = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  const insertBills = (userId: string, tag: string, rows: number) =>
    t.services.db.execute(sql`
      insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider)
      select ${userId}, 'sandbox', ${tag} || '-' || g, 'BIL099', 'AT099', '08030000000', 100 * g, 0,
        (array['AIRTIME','MOBILEDATA','CABLEBILLS','UTILITYBILLS'])[1 + g % 4]::bill_type,
        (array['PENDING','SUCCESS','FAILED'])[1 + g % 3]::bill_status, 'MTN Airtime', 'sandbox'
      from generate_series(1, ${rows}) g`);
  const insertTransactions = (userId: string, tag: string, rows: number) =>
    t.services.db.execute(sql`
      insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference)
      select ${userId}, 'sandbox',
        (array['DEPOSIT','WITHDRAWAL','TRANSFER_IN','TRANSFER_OUT','BILL'])[1 + g % 5]::wallet_transaction_type,
        (array['PENDING','COMPLETED','FAILED'])[1 + g % 3]::wallet_transaction_status, 100 * g, 0, ${tag} || '-' || g
      from generate_series(1, ${rows}) g`);

  it('after inserts, status and type changes, moves, deletes and rolled-back writes', async () => {
    await insertBills(a.user.id, 'LT-A', 40);
    await insertBills(b.user.id, 'LT-B', 10);
    await insertTransactions(a.user.id, 'LT-A', 40);
    await insertTransactions(b.user.id, 'LT-B', 10);
    const first = await expectExactTotals(t.services.db, a.user.id);
    expect(first['bill_records * *']).toBe(40);
    expect(first['wallet_transactions * *']).toBe(40);

    const db = t.services.db;
    const mine = (table: string, userId: string) => sql`${sql.raw(table)}.user_id = ${userId}`;
    await db.execute(
      sql`update bill_records set status = 'SUCCESS' where ${mine('bill_records', a.user.id)} and status = 'PENDING' and amount < 1500`,
    );
    await db.execute(
      sql`update bill_records set type = 'CABLEBILLS' where ${mine('bill_records', a.user.id)} and type = 'AIRTIME' and amount > 2000`,
    );
    await db.execute(
      sql`update wallet_transactions set status = 'FAILED', type = 'BILL' where ${mine('wallet_transactions', a.user.id)} and status = 'PENDING' and amount < 2000`,
    );
    // Columns the counts do not follow, and a status set to the value it already had.
    await db.execute(
      sql`update bill_records set updated_at = now(), status = status where ${mine('bill_records', a.user.id)}`,
    );
    await db.execute(
      sql`update wallet_transactions set description = 'x' where ${mine('wallet_transactions', a.user.id)}`,
    );
    // Rows moving to another owner and to the other environment.
    await db.execute(
      sql`update bill_records set user_id = ${b.user.id} where ${mine('bill_records', a.user.id)} and amount between 500 and 900`,
    );
    await db.execute(
      sql`update wallet_transactions set environment = 'production' where ${mine('wallet_transactions', a.user.id)} and amount between 500 and 900`,
    );
    await db.execute(sql`delete from bill_records where ${mine('bill_records', a.user.id)} and amount > 3500`);
    await db.execute(
      sql`delete from wallet_transactions where ${mine('wallet_transactions', a.user.id)} and amount > 3500`,
    );
    // A transaction whose inserts and status changes are rolled back leaves the counts as they were.
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`update bill_records set status = 'FAILED' where ${mine('bill_records', a.user.id)}`);
        await tx.execute(sql`insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference)
          values (${a.user.id}, 'sandbox', 'DEPOSIT', 'PENDING', 1, 0, 'LT-ROLLED-BACK')`);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');

    for (const tenant of [a, b]) await expectExactTotals(db, tenant.user.id);
    await expectExactTotals(db, a.user.id, 'production');
    const after = await expectExactTotals(db, a.user.id);
    expect(after['bill_records * *']).toBeLessThan(40);
    expect(after['wallet_transactions * FAILED']).toBeGreaterThan(first['wallet_transactions * FAILED']!);
  });

  it('the stores answer the kept totals: a settled transaction moves from PENDING to its outcome', async () => {
    const c = await seedTenant(t.services);
    const owner = { userId: c.user.id, environment: 'sandbox' as const };
    const rows = [];
    for (let i = 0; i < 5; i++)
      rows.push(
        await transactionStore.insert(t.services.db, {
          userId: c.user.id,
          environment: 'sandbox',
          type: 'DEPOSIT',
          status: 'PENDING',
          amount: 100n,
          fee: 0n,
          reference: `LT-STORE-${i}`,
        }),
      );
    const pending = () => transactionStore.page(t.services.db, owner, { status: 'PENDING' }, 1, 2);
    expect((await pending()).total).toBe(5);
    await transactionStore.settle(t.services.db, rows[0]!.id, 'COMPLETED', new Date());
    await transactionStore.settle(t.services.db, rows[1]!.id, 'FAILED', new Date());
    await transactionStore.touch(t.services.db, rows[2]!.id, new Date());
    expect((await pending()).total).toBe(3);
    expect(await transactionStore.count(t.services.db, owner, { type: 'DEPOSIT', status: 'COMPLETED' })).toBe(1);
    expect((await transactionStore.page(t.services.db, owner, {}, 1, 2)).total).toBe(5);
    expect((await billStore.page(t.services.db, owner, { status: 'FAILED' }, 1, 20)).total).toBe(0);
    await expectExactTotals(t.services.db, c.user.id);
  });
});
