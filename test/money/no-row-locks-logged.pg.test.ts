import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { onPostgres } from '../helpers/database.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';
import { principalOf } from '../helpers/principal.js';

/**
 * The statement after a provider call answers the Idempotency-Key its open statement left
 * `running` by updating that row in place: an upsert would first log a row lock of the key
 * (a Heap LOCK record) on every bill, deposit and payout. Read from the WAL of a database of the
 * file's own (PostgreSQL only: pg_walinspect).
 */
describe.runIf(onPostgres)('writes after a provider call log no row locks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ isolated: true });
    await t.services.db.execute(sql`create extension if not exists pg_walinspect`);
  });
  afterAll(() => t.close());

  const locksLogged = async (table: string, run: () => Promise<unknown>) => {
    const lsn = async () =>
      (await queryRows<{ l: string }>(t.services.db, sql`select pg_current_wal_lsn()::text as l`))[0]!.l;
    const start = await lsn();
    await run();
    const end = await lsn();
    const rows = await queryRows<{ n: number }>(
      t.services.db,
      sql`select count(*)::int as n from pg_get_wal_records_info(${start}::pg_lsn, ${end}::pg_lsn) r
        where r.resource_manager = 'Heap' and r.record_type = 'LOCK'
          and substring(r.block_ref from 'rel \\d+/\\d+/(\\d+)') = (
            select relfilenode::text from pg_class where relname = ${table})
          and substring(r.block_ref from 'rel \\d+/(\\d+)/') = (
            select oid::text from pg_database where datname = current_database())`,
    );
    return rows[0]!.n;
  };

  it('is written without locking the key row first, for airtime and a bank-transfer deposit', async () => {
    const tenant = await seedTenant(t.services);
    const principal = principalOf(tenant.user.id);
    await fund(t, tenant, 1000);
    const airtime = { type: 'AIRTIME' as const, biller: 'MTN', customer: '08031234567', amount: 100 };
    await t.services.bills.pay(principal, airtime, undefined);
    await t.services.deposits.bankTransfer(principal, { amount: 100 }, undefined);

    let paid: Awaited<ReturnType<typeof t.services.bills.pay>> | undefined;
    expect(
      await locksLogged(
        'idempotency_keys',
        async () => (paid = await t.services.bills.pay(principal, airtime, 'in-place')),
      ),
    ).toBe(0);
    expect(
      await locksLogged('idempotency_keys', () =>
        t.services.deposits.bankTransfer(principal, { amount: 100 }, 'in-place'),
      ),
    ).toBe(0);
    // Answered all the same: a retry replays the payment.
    expect(paid?.status).toBe('SUCCESS');
    expect(await t.services.bills.pay(principal, airtime, 'in-place')).toEqual(paid);
    const keys = await queryRows<{ status: string }>(
      t.services.db,
      sql`select status from idempotency_keys where user_id = ${tenant.user.id} and key = 'in-place'`,
    );
    expect(keys.map((k) => k.status)).toEqual(['done', 'done']);
  });

  it('keeps the list counts by updating their rows in place: no count row is locked before its update', async () => {
    const tenant = await seedTenant(t.services);
    const principal = principalOf(tenant.user.id);
    await fund(t, tenant, 1000);
    const airtime = { type: 'AIRTIME' as const, biller: 'MTN', customer: '08031234567', amount: 100 };
    // The first payment creates the owner's count rows (PENDING, SUCCESS) by insert.
    await t.services.bills.pay(principal, airtime, undefined);
    const before = await queryRows<{ n: string }>(
      t.services.db,
      sql`select n::text from list_counts where user_id = ${tenant.user.id} and list = 'bill_records' and status = 'SUCCESS'`,
    );
    expect(await locksLogged('list_counts', () => t.services.bills.pay(principal, airtime, undefined))).toBe(0);
    const after = await queryRows<{ n: string }>(
      t.services.db,
      sql`select n::text from list_counts where user_id = ${tenant.user.id} and list = 'bill_records' and status = 'SUCCESS'`,
    );
    expect(Number(after[0]!.n)).toBe(Number(before[0]!.n) + 1);
  });
});
