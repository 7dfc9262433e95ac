import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { runStatement, statement } from '../../src/db/plain-sql.js';
import { poolsOf } from '../../src/db/pool-routing.js';
import { onPostgres } from '../helpers/database.js';
import { ThrowawayPostgres } from '../helpers/throwaway-servers.js';

/**
 * PostgreSQL reports a statement's error before it has rolled the statement's transaction back,
 * and holds its locks until then. A statement that created a few thousand tables takes long to roll
 * back (every file is removed), which makes that window wide enough to see: a caller retrying at
 * once, as a transfer does when its recipient's reference was taken, must not find its own
 * Idempotency-Key's lock still held. Those tables take a lock each until the rollback, more than
 * the shared lock table of the machine's PostgreSQL spares for other sessions (its tests failed with
 * "out of shared memory"), so this runs on a throwaway server of its own with room for them.
 */
const TABLES = 8000;
const SLOW_FAILURE = statement(
  'settled_query_slow_failure',
  // The division's operand is volatile so the planner cannot fold it and fail before the work.
  `select settled_make_tables(${TABLES}), pg_advisory_xact_lock($1::bigint), 1 / (random() * 0)::int`,
);
const TRY_LOCK = statement('settled_query_try_lock', 'select pg_try_advisory_xact_lock($1::bigint) as free');

describe.skipIf(!onPostgres)('a refused statement is handed back once its transaction is over (PostgreSQL)', () => {
  let server: ThrowawayPostgres;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    server = await ThrowawayPostgres.start(['max_locks_per_transaction=512']);
    handle = await openDatabase({ databaseUrl: server.url(), poolSize: 10 });
    await handle.db.execute(
      sql.raw(`create function settled_make_tables(n int) returns int language plpgsql as $$
        begin
          for i in 1..n loop execute format('create table settled_t_%s (a int)', i); end loop;
          return n;
        end $$`),
    );
  });
  afterAll(async () => {
    await handle?.close();
    await server?.destroy();
  });

  it('frees the failed statement’s locks before the error reaches the caller, by runStatement and by Drizzle', async () => {
    const requestPool = poolsOf(handle.db).find((p) => p.name === 'request')!.pool;
    // Idle connections ready, so the retry below is one round trip, not a new connection.
    await Promise.all(Array.from({ length: 4 }, () => handle.db.execute(sql`select 1`)));
    for (const [lockId, fail] of [
      [7_000_001, () => runStatement(handle.db, SLOW_FAILURE, [7_000_001])],
      [
        7_000_002,
        () =>
          handle.db.execute(
            sql`select settled_make_tables(${TABLES}::int), pg_advisory_xact_lock(${7_000_002}::bigint), 1 / (random() * 0)::int`,
          ),
      ],
    ] as const) {
      const before = requestPool.totalCount;
      await expect(fail()).rejects.toThrow();
      const [row] = await runStatement<{ free: boolean }>(handle.db, TRY_LOCK, [lockId]);
      expect(row!.free, `lock ${lockId} is free when the error arrives`).toBe(true);
      // The refusal left a healthy connection: it went back to the pool, not away.
      expect(requestPool.totalCount).toBe(before);
    }
  });

  it('discards the connection after a refusal that would repeat on it, as pg-pool did', async () => {
    const requestPool = poolsOf(handle.db).find((p) => p.name === 'request')!.pool;
    await Promise.all(Array.from({ length: 4 }, () => handle.db.execute(sql`select 1`)));
    const before = requestPool.totalCount;
    // 42P01, not a refusal of the statement's own data: the connection goes, a new one comes.
    await expect(
      runStatement(handle.db, statement('settled_query_no_table', 'select * from settled_no_such_table'), []),
    ).rejects.toThrow(/settled_no_such_table/);
    expect(requestPool.totalCount).toBe(before - 1);
  });
});
