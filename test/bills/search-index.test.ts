import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type Database, queryRows } from '../../src/db/client.js';
import { containingPattern } from '../../src/domain/list-search.js';
import { testDatabase } from '../helpers/database.js';

/**
 * The lists' default order (owner, created_at, id) has one index per table that also carries what a
 * search, an amount range and a type test (migration 0043_list_search_covering_indexes): the
 * lower-case references as trailing keys, the raw columns, amount and type in INCLUDE. So a search's
 * exact total and its page's ids are read from that index alone, never row by row from a table in
 * which a large owner's rows are scattered over every page. These tests plan the lists' predicates on
 * a bare copy of each table holding only that index, with sequential and bitmap scans disabled: the
 * plan is an index-only scan when the index can answer alone, a plain index scan when it cannot.
 */
describe('list searches and filters: answered from the owner-and-date index alone', () => {
  const indexOf = async (db: Database, name: string) =>
    (await queryRows<{ indexdef: string }>(db, sql`select indexdef from pg_indexes where indexname = ${name}`))[0];

  /**
   * The plan of `query` on a bare copy of `table` (`columns`: name → value for row g) holding only
   * `index`, with 10,000 rows of one owner, analysed; sequential and bitmap scans off.
   * Temporary, so gone with the transaction.
   */
  async function planOf(
    db: Database,
    table: string,
    columns: Record<string, string>,
    index: { indexdef: string },
    query: string,
  ) {
    const bare = `bare_${table}`;
    const names = Object.keys(columns);
    return db.transaction(async (tx) => {
      await tx.execute(
        sql.raw(`create temp table ${bare} on commit drop as select id, ${names.join(', ')} from ${table} limit 0`),
      );
      await tx.execute(sql.raw(index.indexdef.replace(/INDEX (\S+) ON (\S+)/, `INDEX bare_$1 ON ${bare}`)));
      await tx.execute(
        sql.raw(
          `insert into ${bare} (id, ${names.join(', ')}) select gen_random_uuid(), ${Object.values(columns).join(', ')} from generate_series(1, 10000) g`,
        ),
      );
      await tx.execute(sql.raw(`analyze ${bare}`));
      for (const scan of ['seqscan', 'bitmapscan']) await tx.execute(sql.raw(`set local enable_${scan} = off`));
      const rows = await queryRows<{ 'QUERY PLAN': string }>(tx, sql.raw(`explain ${query.replaceAll(table, bare)}`));
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  const owner = randomUUID();
  const common = {
    user_id: `'${owner}'::uuid`,
    environment: `'sandbox'`,
    created_at: `now() - g * interval '1 minute'`,
    amount: `g * 100`,
  };
  const mine = `user_id = '${owner}' and environment = 'sandbox'`;
  const search = (column: string) => `lower(${column}) like lower('${containingPattern('BENCH-42')}')`;

  it('bill records: a search on reference or tx_ref, an amount range and a type, total and page', async () => {
    const { db } = await testDatabase();
    const index = await indexOf(db, 'bill_records_owner_created_search_idx');
    expect(index?.indexdef).toMatch(
      /\(user_id, environment, created_at, id, lower\(reference\), lower\(tx_ref\)\) INCLUDE \(reference, tx_ref, amount, type\)/,
    );
    const columns = {
      ...common,
      reference: `'BENCH-' || g`,
      tx_ref: `'SBX-' || g`,
      type: `(array['AIRTIME','CABLEBILLS'])[1 + g % 2]::bill_type`,
    };
    const filters = [
      `(${search('reference')} or ${search('tx_ref')})`,
      'amount >= 1000 and amount <= 2000',
      `type = 'AIRTIME'`,
    ];
    for (const filter of filters) {
      for (const query of [
        `select count(*) from bill_records where ${mine} and ${filter}`,
        `select id from bill_records where ${mine} and ${filter} order by created_at desc, id desc limit 20`,
        `select id from bill_records where ${mine} and ${filter} order by created_at asc, id asc limit 100`,
      ]) {
        const plan = await planOf(db, 'bill_records', columns, index!, query);
        expect(plan, query).toMatch(/Index Only Scan (Backward )?using bare_bill_records_owner_created_search_idx/);
      }
    }
  });

  it('wallet transactions: a reference search, an amount range and a type, total and page', async () => {
    const { db } = await testDatabase();
    const index = await indexOf(db, 'wallet_transactions_owner_created_search_idx');
    expect(index?.indexdef).toMatch(
      /\(user_id, environment, created_at, id, lower\(reference\)\) INCLUDE \(reference, amount, type\)/,
    );
    const columns = {
      ...common,
      reference: `'TX-BENCH-' || g`,
      type: `(array['DEPOSIT','BILL'])[1 + g % 2]::wallet_transaction_type`,
    };
    for (const filter of [search('reference'), 'amount >= 1000 and amount <= 2000', `type = 'DEPOSIT'`]) {
      for (const query of [
        `select count(*) from wallet_transactions where ${mine} and ${filter}`,
        `select id from wallet_transactions where ${mine} and ${filter} order by created_at desc, id desc limit 20`,
      ]) {
        const plan = await planOf(db, 'wallet_transactions', columns, index!, query);
        expect(plan, query).toMatch(
          /Index Only Scan (Backward )?using bare_wallet_transactions_owner_created_search_idx/,
        );
      }
    }
  });

  it('references have no trigram index left; biller names keep theirs, beginning with the owner', async () => {
    const { db } = await testDatabase();
    const gin = await queryRows<{ indexname: string; indexdef: string }>(
      db,
      sql`select indexname, indexdef from pg_indexes
           where tablename in ('bill_records', 'wallet_transactions') and indexdef ilike '%using gin%'`,
    );
    expect(gin.map((i) => i.indexname)).toEqual(['bill_records_owner_biller_name_trgm_idx']);
    expect(gin[0]!.indexdef).toMatch(/\(user_id, biller_name gin_trgm_ops\)/);
  });

  it('lower(column) LIKE lower(pattern) matches exactly what ILIKE does, wildcards in the term taken literally', async () => {
    const { db } = await testDatabase();
    const texts = [
      'BENCH-42',
      'bench-420',
      'xBeNcH-42y',
      'BENCH_42',
      'BENCH%42',
      'ÉTÉ-42',
      'été-42',
      'a\\b',
      'İstanbul',
      'STRASSE',
      'straße',
    ];
    const terms = ['bench-42', 'H_4', 'H%4', 'été', 'ÉTÉ', '\\', 'i̇stanbul', 'İSTANBUL', 'ß', 'SS'];
    for (const term of terms) {
      const rows = await queryRows<{ text: string; ilike: boolean; lowered: boolean }>(
        db,
        sql`select t as text, t ilike ${containingPattern(term)} as ilike, lower(t) like lower(${containingPattern(term)}) as lowered
              from unnest(${`{${texts.map((t) => `"${t.replace(/\\/g, '\\\\')}"`).join(',')}}`}::text[]) t`,
      );
      for (const row of rows) expect(row.lowered, `${row.text} / ${term}`).toBe(row.ilike);
    }
  });
});
