import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

/**
 * The gateway's sessions run at READ COMMITTED whatever the database's default: its one-statement
 * money writes rely on it; and plan serially unless the operator says otherwise (see
 * src/db/session-options.ts).
 */
describe.skipIf(!onPostgres)('session isolation (PostgreSQL)', () => {
  let url: string;
  let handle: DatabaseHandle | undefined;
  beforeAll(async () => {
    url = await isolatedTestDatabaseUrl();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(
        `alter database "${new URL(url).pathname.slice(1)}" set default_transaction_isolation = 'repeatable read'`,
      );
    } finally {
      await admin.end();
    }
  });
  afterAll(async () => {
    await handle?.close();
  });

  const isolationOf = async (client: pg.Client) =>
    (await client.query<{ transaction_isolation: string }>('show transaction_isolation')).rows[0]!
      .transaction_isolation;

  it('runs READ COMMITTED on a database whose default is REPEATABLE READ, keeping the URL’s own options', async () => {
    const plain = new pg.Client({ connectionString: url });
    await plain.connect();
    try {
      expect(await isolationOf(plain)).toBe('repeatable read');
    } finally {
      await plain.end();
    }

    // The URL's own options travel too (a setting no other startup parameter can replace).
    const withOptions = new URL(url);
    withOptions.searchParams.set('options', '-c work_mem=5MB');
    handle = await openDatabase({ databaseUrl: withOptions.toString(), poolSize: 2 });
    const [row] = await queryRows<{ isolation: string; memory: string; workers: string }>(
      handle.db,
      sql`select current_setting('transaction_isolation') as isolation, current_setting('work_mem') as memory,
            current_setting('max_parallel_workers_per_gather') as workers`,
    );
    expect(row).toEqual({ isolation: 'read committed', memory: '5MB', workers: '0' });
  });

  it('plans serially unless the operator’s options turn parallel workers back on', async () => {
    const withWorkers = new URL(url);
    withWorkers.searchParams.set('options', '-c max_parallel_workers_per_gather=2');
    const parallel = await openDatabase({ databaseUrl: withWorkers.toString(), poolSize: 1, migrate: false });
    try {
      const [row] = await queryRows<{ workers: string }>(
        parallel.db,
        sql`select current_setting('max_parallel_workers_per_gather') as workers`,
      );
      expect(row).toEqual({ workers: '2' });
    } finally {
      await parallel.close();
    }
  });
});
