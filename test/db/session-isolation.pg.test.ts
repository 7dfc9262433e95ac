import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { withSessionOptions } from '../../src/db/session-options.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

/**
 * The gateway's sessions run at READ COMMITTED whatever the database's default: its one-statement
 * money writes rely on it (see src/db/session-options.ts).
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

    handle = await openDatabase({ databaseUrl: `${url}?options=-c%20application_name%3Dsession-test`, poolSize: 2 });
    const [row] = await queryRows<{ isolation: string; name: string }>(
      handle.db,
      sql`select current_setting('transaction_isolation') as isolation, current_setting('application_name') as name`,
    );
    expect(row).toEqual({ isolation: 'read committed', name: 'session-test' });
    // A transaction that names its level still gets it.
    const [named] = await handle.db.transaction(async (tx) => {
      await tx.execute(sql.raw('set transaction isolation level serializable'));
      return queryRows<{ isolation: string }>(tx, sql`select current_setting('transaction_isolation') as isolation`);
    });
    expect(named!.isolation).toBe('serializable');
  });

  it('leaves a connection string without options as it is', () => {
    expect(withSessionOptions('postgres:///test?host=%2Fvar%2Frun%2Fpostgresql').connectionString).toBe(
      'postgres:///test?host=%2Fvar%2Frun%2Fpostgresql',
    );
  });
});
