import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { expectExactTotals } from './list-totals-exact.js';

/**
 * The kept list totals under real concurrency (PostgreSQL): many transactions at once insert rows
 * for the same two owners, settle them to different outcomes, delete some and roll some back; the
 * totals by type and status must still equal count(*) at the end.
 */
describe.skipIf(!onPostgres)('list totals kept by the database under concurrent writers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('stay exact while 24 writers insert, settle, delete and roll back at once', async () => {
    const owners = [(await seedTenant(t.services)).user.id, (await seedTenant(t.services)).user.id];
    const types = ['DEPOSIT', 'WITHDRAWAL', 'BILL'];
    const billTypes = ['AIRTIME', 'CABLEBILLS'];
    let rolledBack = 0;
    const writer = async (w: number) => {
      for (let i = 0; i < 12; i++) {
        const userId = owners[(w + i) % 2]!;
        const other = owners[(w + i + 1) % 2]!;
        const tag = `LTC-${w}-${i}`;
        try {
          await t.services.db.transaction(async (tx) => {
            const type = types[(w * 7 + i) % types.length]!;
            const [row] = await queryRows<{ id: string }>(
              tx,
              sql`insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference)
                values (${userId}, 'sandbox', ${type}::wallet_transaction_type, 'PENDING', ${100 + i}, 0, ${tag}) returning id`,
            );
            // A transfer-like pair: the other owner's row in the same transaction.
            await tx.execute(sql`insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference)
              values (${other}, 'sandbox', 'TRANSFER_IN', 'COMPLETED', ${100 + i}, 0, ${`${tag}:in`})`);
            await tx.execute(sql`insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider)
              values (${userId}, 'sandbox', ${tag}, 'BIL099', 'AT099', '08030000000', ${100 + i}, 0,
                ${billTypes[i % 2]!}::bill_type, 'PENDING', 'MTN Airtime', 'sandbox')`);
            await tx.execute(sql`update wallet_transactions set status = ${i % 3 === 0 ? 'FAILED' : 'COMPLETED'}::wallet_transaction_status
              where id = ${row!.id} and status = 'PENDING'`);
            await tx.execute(sql`update bill_records set status = ${i % 2 ? 'SUCCESS' : 'FAILED'}::bill_status
              where user_id = ${userId} and reference = ${tag}`);
            if (i % 5 === 4)
              await tx.execute(sql`delete from bill_records where user_id = ${userId} and reference = ${tag}`);
            if (i % 4 === 3) {
              rolledBack += 1;
              throw new Error('roll back');
            }
          });
        } catch (error) {
          if (!(error instanceof Error && error.message === 'roll back')) throw error;
        }
        // Settle a row some other writer left pending, racing the others for it.
        await t.services.db.execute(sql`update bill_records set status = 'SUCCESS'
          where id = (select id from bill_records where user_id = ${userId} and status = 'PENDING' limit 1)`);
      }
    };
    await Promise.all(Array.from({ length: 24 }, (_, w) => writer(w)));
    expect(rolledBack).toBeGreaterThan(0);
    for (const userId of owners) {
      const totals = await expectExactTotals(t.services.db, userId);
      expect(totals['wallet_transactions * *']).toBeGreaterThan(100);
    }
  });
});
