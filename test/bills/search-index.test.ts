import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type Database, queryRows } from '../../src/db/client.js';
import { testDatabase } from '../helpers/database.js';

/**
 * The partial-match searches (bill records by `reference` or `tx_ref`, a biller-name pattern,
 * transactions by `reference`) are always one owner's. Each table has ONE trigram index, and it
 * begins with the owner (btree_gin, migration 0034): a search reads the owner's rows of each
 * trigram, not every owner's, so a term common in the table costs what the owner's rows cost.
 */
describe('partial-match searches: one trigram index per table, beginning with the owner', () => {
  const ginIndexes = (db: Database, table: string) =>
    queryRows<{ indexname: string; indexdef: string }>(
      db,
      sql`select indexname, indexdef from pg_indexes where tablename = ${table} and indexdef ilike '%using gin%'`,
    );

  /**
   * The plan of `query` on a bare copy of `table`: its `columns` only, holding only `index` (made
   * from its definition), with 30,000 rows of the searching owner, analysed. Which index the
   * predicates use then depends on nothing else in the database (other tests' rows, the owner's
   * btree indexes). Temporary, so gone with the transaction.
   */
  async function planOf(
    db: Database,
    table: string,
    columns: string[],
    index: { indexdef: string },
    owner: string,
    query: string,
  ) {
    const bare = `bare_${table}`;
    return db.transaction(async (tx) => {
      await tx.execute(
        sql.raw(`create temp table ${bare} on commit drop as select id, ${columns.join(', ')} from ${table} limit 0`),
      );
      await tx.execute(sql.raw(index.indexdef.replace(/INDEX (\S+) ON (\S+)/, `INDEX bare_$1 ON ${bare}`)));
      const values = columns.map((column) => (column === 'user_id' ? `'${owner}'::uuid` : `'${column}-' || g`));
      await tx.execute(
        sql.raw(
          `insert into ${bare} (id, ${columns.join(', ')}) select gen_random_uuid(), ${values.join(', ')} from generate_series(1, 30000) g`,
        ),
      );
      await tx.execute(sql.raw(`analyze ${bare}`));
      // 30,000 rows fit a few hundred pages: a sequential scan would win, and show nothing of the index.
      await tx.execute(sql`set local enable_seqscan = off`);
      const rows = await queryRows<{ 'QUERY PLAN': string }>(tx, sql.raw(`explain ${query.replace(table, bare)}`));
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  it('bill records: the OR of reference and tx_ref scans the owner index twice, with the owner in each scan', async () => {
    const { db } = await testDatabase();
    const gin = await ginIndexes(db, 'bill_records');
    expect(gin.map((i) => i.indexname)).toEqual(['bill_records_owner_search_trgm_idx']);
    expect(gin[0]!.indexdef).toMatch(
      /\(user_id, reference gin_trgm_ops, tx_ref gin_trgm_ops, biller_name gin_trgm_ops\)/,
    );
    const owner = randomUUID();
    const plan = await planOf(
      db,
      'bill_records',
      ['user_id', 'reference', 'tx_ref', 'biller_name'],
      gin[0]!,
      owner,
      `select id from bill_records where user_id = '${owner}' and (reference ilike '%4242%' or tx_ref ilike '%4242%')`,
    );
    expect(plan).toContain('BitmapOr');
    const scans = plan
      .split('\n')
      .filter((line) => line.includes('Bitmap Index Scan on bare_bill_records_owner_search_trgm_idx'));
    expect(scans).toHaveLength(2);
    // Each scan's condition holds the owner as well as the pattern (the line after the scan's).
    const conditions = plan.match(/Index Cond: \(\(user_id = [^\n]+~~\*[^\n]+/g) ?? [];
    expect(conditions).toHaveLength(2);
  });

  it('wallet transactions: a reference search scans the owner index with the owner in its condition', async () => {
    const { db } = await testDatabase();
    const gin = await ginIndexes(db, 'wallet_transactions');
    expect(gin.map((i) => i.indexname)).toEqual(['wallet_transactions_owner_reference_trgm_idx']);
    expect(gin[0]!.indexdef).toMatch(/\(user_id, reference gin_trgm_ops\)/);
    const owner = randomUUID();
    const plan = await planOf(
      db,
      'wallet_transactions',
      ['user_id', 'reference'],
      gin[0]!,
      owner,
      `select id from wallet_transactions where user_id = '${owner}' and reference ilike '%4242%'`,
    );
    expect(plan).toContain('Bitmap Index Scan on bare_wallet_transactions_owner_reference_trgm_idx');
    expect(plan).toMatch(/Index Cond: \(\(user_id = [^\n]+~~\*/);
  });
});
