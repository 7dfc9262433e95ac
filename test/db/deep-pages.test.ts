import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { RecordFilter } from '../../src/domain/bills/bills-service.js';
import type { TransactionFilter } from '../../src/domain/wallet/transaction-store.js';
import { principalOf } from '../graph/seed.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

/**
 * Paginated lists read deep pages from the near end of the list and through the index alone; every
 * page must still hold exactly the rows of the plain `ORDER BY … LIMIT … OFFSET …` it replaced, with
 * the same exact total. Rows share timestamps and amounts, so the id tie-breaker decides order.
 */
describe('deep pages return the rows plain OFFSET pages returned', () => {
  let t: TestApp;
  let tenant: Tenant;
  let manyNames: Tenant;
  const ROWS = 150;
  const LIMIT = 7;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await seedTenant(t.services);
    manyNames = await seedTenant(t.services);
    const other = await seedTenant(t.services);
    for (const owner of [tenant, other]) {
      await t.services.db.execute(sql`
        insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider, tx_ref, created_at, updated_at)
        select ${owner.user.id}, 'sandbox', 'DEEP-' || g, (array['BIL099','BIL100','BIL119'])[1 + g % 3], 'AT099',
          '0803000000' || (g % 4), (g % 11) * 100, 0,
          (array['AIRTIME','MOBILEDATA','CABLEBILLS','UTILITYBILLS'])[1 + g % 4]::bill_type,
          (array['SUCCESS','SUCCESS','FAILED','PENDING'])[1 + (g / 4) % 4]::bill_status,
          (array['MTN Airtime','Airtel Airtime','DStv','Ikeja Electric Prepaid'])[1 + g % 4], 'sandbox', 'SBX-' || g,
          timestamptz '2026-01-10T00:00:00Z' - ((g / 3) || ' seconds')::interval,
          timestamptz '2026-01-10T00:00:00Z' - ((g % 7) || ' minutes')::interval
        from generate_series(1, ${ROWS}) g`);
      await t.services.db.execute(sql`
        insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference, created_at, updated_at)
        select ${owner.user.id}, 'sandbox',
          (array['DEPOSIT','WITHDRAWAL','TRANSFER_IN','TRANSFER_OUT','BILL'])[1 + g % 5]::wallet_transaction_type,
          (array['COMPLETED','COMPLETED','FAILED','PENDING'])[1 + (g / 5) % 4]::wallet_transaction_status,
          (g % 11) * 100, 0, 'DEEP-TX-' || g,
          timestamptz '2026-01-10T00:00:00Z' - ((g / 3) || ' seconds')::interval, timestamptz '2026-01-10T00:00:00Z'
        from generate_series(1, ${ROWS}) g`);
    }
    // More distinct biller names than the name filter steps through: it tests every row instead.
    await t.services.db.execute(sql`
      insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider, created_at, updated_at)
      select ${manyNames.user.id}, 'sandbox', 'NAMES-' || g, 'BIL099', 'AT099', '08030000000', 100, 0, 'AIRTIME', 'SUCCESS',
        'Biller ' || g, 'sandbox', timestamptz '2026-01-10T00:00:00Z' - ((g / 2) || ' seconds')::interval, now()
      from generate_series(1, 520) g`);
  });
  afterAll(() => t.close());

  /** Every page (and the one past the end) against the plain OFFSET query over the same condition. */
  async function comparePages(
    list: (page: number) => Promise<{ ids: string[]; total: number; totalPages: number; hasNext: boolean }>,
    where: SQL,
    orderBy: SQL,
    table: 'bill_records' | 'wallet_transactions',
  ): Promise<number> {
    const [counted] = await queryRows<{ n: number }>(
      t.services.db,
      sql`select count(*)::int as n from ${sql.raw(table)} where ${where}`,
    );
    const total = Number(counted!.n);
    const pages = Math.ceil(total / LIMIT);
    for (let page = 1; page <= pages + 1; page++) {
      const expected = await queryRows<{ id: string }>(
        t.services.db,
        sql`select id from ${sql.raw(table)} where ${where} order by ${orderBy} limit ${LIMIT} offset ${(page - 1) * LIMIT}`,
      );
      const got = await list(page);
      expect({ page, ids: got.ids }).toEqual({ page, ids: expected.map((r) => r.id) });
      expect(got.total).toBe(total);
      expect(got.totalPages).toBe(pages);
      expect(got.hasNext).toBe(page < pages);
    }
    return total;
  }

  const bills = (owner: Tenant, filter: RecordFilter) => async (page: number) => {
    const result = await t.services.bills.records(principalOf(owner), filter, page, LIMIT);
    return { ...result, ids: result.bills.map((b) => b.id) };
  };
  const owned = (owner: Tenant) => sql`user_id = ${owner.user.id} and environment = 'sandbox'`;

  const sorts = [
    ['createdAt', 'created_at'],
    ['amount', 'amount'],
    ['updatedAt', 'updated_at'],
  ] as const;
  for (const [sortBy, column] of sorts)
    for (const sortOrder of ['ASC', 'DESC'] as const)
      it(`bill records sorted by ${sortBy} ${sortOrder}`, async () => {
        const direction = sql.raw(sortOrder);
        const total = await comparePages(
          bills(tenant, { sortBy, sortOrder }),
          owned(tenant),
          sql`${sql.raw(column)} ${direction}, id ${direction}`,
          'bill_records',
        );
        expect(total).toBe(ROWS);
      });

  const filters: Array<[string, RecordFilter, SQL]> = [
    ['type', { type: 'AIRTIME' }, sql`type = 'AIRTIME'`],
    ['status', { status: 'FAILED' }, sql`status = 'FAILED'`],
    ['type and status', { type: 'CABLEBILLS', status: 'SUCCESS' }, sql`type = 'CABLEBILLS' and status = 'SUCCESS'`],
    ['part of a biller name', { billerName: 'AIR' }, sql`biller_name ilike '%AIR%'`],
    ['a biller name nobody has', { billerName: 'nothing' }, sql`false`],
    ['biller code', { billerCode: 'BIL119' }, sql`biller_code = 'BIL119'`],
    ['customer', { customer: '08030000002' }, sql`customer = '08030000002'`],
    ['search', { search: 'DEEP-1' }, sql`(reference ilike '%DEEP-1%' or tx_ref ilike '%DEEP-1%')`],
    ['amount range', { minAmount: 2, maxAmount: 6 }, sql`amount between 200 and 600`],
  ];
  for (const [name, filter, condition] of filters)
    it(`bill records filtered by ${name}`, async () => {
      await comparePages(
        bills(tenant, filter),
        sql`${owned(tenant)} and ${condition}`,
        sql`created_at desc, id desc`,
        'bill_records',
      );
    });

  it('bill records filtered by part of a biller name when the owner has hundreds of names', async () => {
    const total = await comparePages(
      bills(manyNames, { billerName: 'er 1' }),
      sql`${owned(manyNames)} and biller_name ilike '%er 1%'`,
      sql`created_at desc, id desc`,
      'bill_records',
    );
    expect(total).toBeGreaterThan(100);
  });

  const transactions = (filter: TransactionFilter) => async (page: number) => {
    const result = await t.services.wallet.transactions(principalOf(tenant), filter, page, LIMIT);
    return { ...result, ids: result.transactions.map((r) => r.id) };
  };
  const transactionFilters: Array<[string, TransactionFilter, SQL]> = [
    ['nothing', {}, sql`true`],
    [
      'type and status',
      { type: 'TRANSFER_OUT', status: 'COMPLETED' },
      sql`type = 'TRANSFER_OUT' and status = 'COMPLETED'`,
    ],
    ['search', { search: 'TX-1' }, sql`reference ilike '%TX-1%'`],
    ['amount range', { minAmount: 200n, maxAmount: 600n }, sql`amount between 200 and 600`],
  ];
  for (const [name, filter, condition] of transactionFilters)
    it(`wallet transactions filtered by ${name}`, async () => {
      await comparePages(
        transactions(filter),
        sql`${owned(tenant)} and ${condition}`,
        sql`created_at desc, id desc`,
        'wallet_transactions',
      );
    });
});
