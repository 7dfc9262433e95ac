import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ledger, SYSTEM_SHARDS, systemAccount } from '../../src/domain/ledger/ledger.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { watchDriver } from '../helpers/driver-watch.js';
import { fund } from '../helpers/wallet.js';
import { principalOf } from '../helpers/principal.js';

const writing = (statements: string[]) => statements.filter((text) => /\b(insert|update|delete)\b/i.test(text));

const airtime = { type: 'AIRTIME' as const, biller: 'MTN', customer: '08031234567', amount: 100 };

describe('an operation with a provider call commits once before it and once after', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('airtime: one statement holds and records, one captures and settles; a replay writes nothing', async () => {
    const tenant = await seedTenant(t.services);
    const principal = principalOf(tenant.user.id);
    await fund(t, tenant, 1000);
    // The first payment resolves the catalogue and the accounts' ids; later ones know them.
    await t.services.bills.pay(principal, airtime, undefined);
    // A settle lands on a random shard of provider clearing and fees: every shard's id is known first.
    for (let shard = 0; shard < SYSTEM_SHARDS; shard++)
      for (const code of ['provider_clearing', 'fees'] as const)
        await ledger.cachedAccountId(t.services.db, { ...systemAccount('sandbox', code), shard });
    const watch = watchDriver(t);
    let paid: Awaited<ReturnType<typeof t.services.bills.pay>>;
    try {
      paid = await t.services.bills.pay(principal, airtime, 'two-statements');
      expect(await t.services.bills.pay(principal, airtime, 'two-statements')).toEqual(paid);
    } finally {
      watch.stop();
    }
    expect(paid.status).toBe('SUCCESS');
    // The answer is the row as written.
    expect(await t.services.bills.byId(paid.id)).toEqual(paid);
    // Open and settle for the payment, the open statement alone (writing nothing) for the replay.
    expect(writing(watch.seen.statements)).toHaveLength(3);
    expect(watch.seen.statements.length).toBeLessThanOrEqual(3);
    expect(watch.seen.transactions).toBe(0);
    expect(await ledger.balances(t.services.db, 'sandbox', tenant.user.id)).toEqual({
      available: 100_000n - 2n * 10_000n,
      held: 0n,
    });
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
    const moves = await queryRows(
      t.services.db,
      sql`select kind, from_status, to_status from operation_transitions where operation_id = ${paid.id}`,
    );
    expect(moves).toEqual([{ kind: 'bill', from_status: 'PENDING', to_status: 'SUCCESS' }]);
  });

  it('bank-transfer deposit: one statement records, one moves it to pending; a replay writes nothing', async () => {
    const tenant = await seedTenant(t.services);
    const principal = principalOf(tenant.user.id);
    await t.services.deposits.bankTransfer(principal, { amount: 100 }, undefined);
    const watch = watchDriver(t);
    let started: Awaited<ReturnType<typeof t.services.deposits.bankTransfer>>;
    try {
      started = await t.services.deposits.bankTransfer(principal, { amount: 100 }, 'two-statements');
      expect(await t.services.deposits.bankTransfer(principal, { amount: 100 }, 'two-statements')).toEqual(started);
    } finally {
      watch.stop();
    }
    expect(started).toMatchObject({ status: 'pending', version: 2 });
    expect(writing(watch.seen.statements)).toHaveLength(3);
    expect(watch.seen.statements.length).toBeLessThanOrEqual(3);
    expect(watch.seen.transactions).toBe(0);
    const stored = await t.services.deposits.get(principal, started.reference);
    expect(stored).toEqual(started);
  });
});
