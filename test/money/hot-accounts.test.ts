import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ledger, SYSTEM_SHARDS, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

describe('system accounts are spread over shards', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Its own database on PostgreSQL: other files move provider clearing too, and balances here are exact.
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  it('posts each system line to one of its shards; balances sum the shards; a reversal hits the same row; every row equals its entries', async () => {
    const before = await ledger.systemBalance(t.services.db, 'sandbox', 'provider_clearing');
    const tenants = await Promise.all(Array.from({ length: 3 }, () => seedTenant(t.services)));
    const references: string[] = [];
    for (let i = 0; i < 60; i++) {
      const reference = crypto.randomUUID();
      references.push(reference);
      await t.services.db.transaction((tx) =>
        ledger.post(tx, {
          environment: 'sandbox',
          kind: 'hot-test',
          reference,
          lines: [
            { account: systemAccount('sandbox', 'provider_clearing'), amount: -100n },
            { account: walletOf('sandbox', tenants[i % 3]!.user.id), amount: 100n },
          ],
        }),
      );
    }
    const shards = await queryRows<{ key: string }>(
      t.services.db,
      sql`select distinct a.key from ledger_entries e join ledger_accounts a on a.id = e.account_id
          join ledger_postings p on p.id = e.posting_id
          where p.kind = 'hot-test' and p.reference = any(${`{${references.join(',')}}`}::text[]) and a.user_id is null`,
    );
    // 60 postings over 16 shards: all on one row would mean no spreading at all.
    expect(shards.length).toBeGreaterThan(4);
    expect(shards.length).toBeLessThanOrEqual(SYSTEM_SHARDS);
    expect(shards.every((s) => /^sandbox:system:provider_clearing(#\d+)?$/.test(s.key))).toBe(true);
    expect(await ledger.systemBalance(t.services.db, 'sandbox', 'provider_clearing')).toBe(before - 6_000n);

    const postingId = await ledger.postingId(t.services.db, 'sandbox', 'hot-test', references[0]!);
    await t.services.db.transaction((tx) => ledger.reverse(tx, postingId!));
    const [original, reversal] = await Promise.all(
      [postingId!, (await ledger.postingId(t.services.db, 'sandbox', 'reversal', postingId!))!].map(async (id) => {
        const [row] = await queryRows<{ account_id: string }>(
          t.services.db,
          sql`select e.account_id from ledger_entries e join ledger_accounts a on a.id = e.account_id
              where e.posting_id = ${id} and a.user_id is null`,
        );
        return row!.account_id;
      }),
    );
    expect(reversal).toBe(original);
    expect(await ledger.systemBalance(t.services.db, 'sandbox', 'provider_clearing')).toBe(before - 5_900n);

    const check = await t.services.ledgerCheck.run();
    expect(check.mismatchedAccounts.filter((a) => a.key.includes(':system:'))).toEqual([]);
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
  });
});
