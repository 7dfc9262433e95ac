import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { testDatabase } from '../helpers/database.js';

/**
 * Bill search (`reference` or `tx_ref` like a text, a biller-name pattern) is served by ONE
 * trigram index over the three columns: every write of a bill record feeds one GIN pending list
 * instead of three. The same ILIKE predicates must still find their rows through it.
 */
describe('bill records: one trigram index for the searched columns', () => {
  it('is the only GIN index of bill_records, and the OR of reference and tx_ref scans it twice', async () => {
    const { db } = await testDatabase();
    const gin = await queryRows<{ indexname: string; indexdef: string }>(
      db,
      sql`select indexname, indexdef from pg_indexes where tablename = 'bill_records' and indexdef ilike '%using gin%'`,
    );
    expect(gin.map((i) => i.indexname)).toEqual(['bill_records_search_trgm_idx']);
    expect(gin[0]!.indexdef).toMatch(/reference gin_trgm_ops, tx_ref gin_trgm_ops, biller_name gin_trgm_ops/);
    // With sequential scans ruled out the plan shows which index the predicates can use, whatever
    // rows the database holds. (A biller-name pattern on a near-empty table rightly reads the
    // (owner, biller_name) btree instead; at 100,000 records it scans this index.)
    const plan = await db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const search = await queryRows<{ 'QUERY PLAN': string }>(
        tx,
        sql`explain select id from bill_records where reference ilike '%4242%' or tx_ref ilike '%4242%'`,
      );
      return search.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('BitmapOr');
    expect(plan.match(/Bitmap Index Scan on bill_records_search_trgm_idx/g)).toHaveLength(2);
  });
});
