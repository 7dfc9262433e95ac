import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/client.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

/** A migrations folder in Drizzle's layout holding the given migrations, in order. */
function migrationsFolder(migrations: Array<{ tag: string; sql: string }>): string {
  const folder = mkdtempSync(join(tmpdir(), 'pgw-migrations-'));
  mkdirSync(join(folder, 'meta'));
  const entries = migrations.map(({ tag }, idx) => ({
    idx,
    version: '7',
    when: 1_700_000_000_000 + idx,
    tag,
    breakpoints: true,
  }));
  writeFileSync(
    join(folder, 'meta', '_journal.json'),
    JSON.stringify({ version: '7', dialect: 'postgresql', entries }),
  );
  for (const { tag, sql } of migrations) writeFileSync(join(folder, `${tag}.sql`), sql);
  return folder;
}

const CREATE = { tag: '0000_probe', sql: 'create table lock_probe (id int primary key);' };
const ALTER = { tag: '0001_probe_note', sql: 'alter table lock_probe add column note text;' };

describe('migration options', () => {
  it.each([
    [{ lockTimeoutMs: 0 }, /lockTimeoutMs must be a whole number from 1/],
    [{ lockTimeoutMs: Number.NaN }, /lockTimeoutMs/],
    [{ lockTimeoutMs: 1.5 }, /lockTimeoutMs/],
    [{ lockTimeoutMs: 2 ** 31 }, /lockTimeoutMs/],
    [{ attempts: 0 }, /attempts/],
    [{ pauseMs: -1 }, /pauseMs/],
  ])('refuses %o before taking a connection', async (options, message) => {
    let connections = 0;
    const pool = {
      connect: () => {
        connections += 1;
        throw new Error('no connection should be taken');
      },
    } as unknown as pg.Pool;
    await expect(migratePostgres(pool, options)).rejects.toThrow(message);
    expect(connections).toBe(0);
  });
});

/**
 * A migration whose DDL waits for a table lock queues every later query of that table behind it.
 * Each attempt waits a bounded time, rolls back and tries again; the table is never blocked for
 * longer than one attempt's wait.
 */
describe.skipIf(!onPostgres)('migrations waiting for a table lock', () => {
  let pool: pg.Pool;
  let holder: pg.Client;
  let reader: pg.Client;
  beforeAll(async () => {
    const url = await isolatedTestDatabaseUrl({ migrated: false });
    pool = new pg.Pool({ connectionString: url, max: 2 });
    holder = new pg.Client({ connectionString: url });
    await holder.connect();
    // Connected ahead: the read between attempts measures the lock queue, not a connection's start.
    reader = new pg.Client({ connectionString: url });
    await reader.connect();
    await migratePostgres(pool, { folder: migrationsFolder([CREATE]) });
  });
  afterAll(async () => {
    await holder.end();
    await reader.end();
    await pool.end();
  });

  it('gives up each wait after the lock timeout, lets the table serve, and applies once the lock is free', async () => {
    await holder.query('begin');
    await holder.query('select count(*) from lock_probe');
    const timedOut: number[] = [];
    let readServed = false;
    let servedBeforeNextTimeout: boolean | undefined;
    await migratePostgres(pool, {
      folder: migrationsFolder([CREATE, ALTER]),
      lockTimeoutMs: 300,
      // Long enough for the read below to reach the server before the next attempt on a saturated
      // machine: a read sent in the pause is served then, whatever the machine's speed.
      pauseMs: 2_000,
      attempts: 100,
      onLockTimeout: (attempt) => {
        timedOut.push(attempt);
        // Between attempts nothing waits ahead of a reader: it is served at once, not behind the
        // next attempt's DDL (which would hold it until that attempt gives up).
        if (attempt === 1)
          void reader.query('select count(*) from lock_probe').then(() => {
            readServed = true;
          });
        if (attempt === 2) {
          servedBeforeNextTimeout = readServed;
          void holder.query('commit');
        }
      },
    });
    expect(timedOut.slice(0, 2)).toEqual([1, 2]);
    expect(servedBeforeNextTimeout).toBe(true);
    const { rows } = await pool.query(
      "select count(*)::int as n from information_schema.columns where table_name = 'lock_probe' and column_name = 'note'",
    );
    expect(rows[0].n).toBe(1);
  });

  it('fails with the lock error after its attempts, and leaves the migration lock free', async () => {
    await holder.query('begin');
    await holder.query('select count(*) from lock_probe');
    const third = { tag: '0002_probe_more', sql: 'alter table lock_probe add column more text;' };
    const failing = migratePostgres(pool, {
      folder: migrationsFolder([CREATE, ALTER, third]),
      lockTimeoutMs: 50,
      pauseMs: 10,
      attempts: 2,
      onLockTimeout: () => undefined,
    });
    await expect(failing).rejects.toMatchObject({ cause: expect.objectContaining({ code: '55P03' }) });
    await holder.query('commit');
    // The failed attempt's connection, its session timeouts changed, was discarded, not pooled.
    expect((await pool.query('show lock_timeout')).rows[0].lock_timeout).toBe('0');
    const { rows } = await pool.query(
      "select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())",
    );
    expect(rows[0].n).toBe(0);
  });
});
