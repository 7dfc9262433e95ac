import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import type { Child } from '../helpers/child.js';
import { onPostgres } from '../helpers/database.js';
import { ThrowawayPostgres } from '../helpers/throwaway-servers.js';
import { waitUntil } from '../helpers/wait.js';
import {
  burst,
  expectExactlyOnce,
  fund,
  linesMatching,
  retryFailed,
  startGateway,
  succeeded,
  tally,
  timeUntilServing,
} from './fault-harness.js';

const FUNDED = 10_000_000n;

/**
 * Failover to a new primary at another address: a throwaway primary with a streaming standby
 * (pg_basebackup -R), the gateway given both in one libpq-style URL. Mid-burst the primary stops
 * and the standby is promoted; the gateway finds the writable one by itself.
 */
describe.skipIf(!onPostgres)('failover to a promoted standby at another address (PostgreSQL)', () => {
  let primary: ThrowawayPostgres;
  let standby: ThrowawayPostgres;
  let database: DatabaseHandle;
  let services: Services;
  let gateway: { child: Child; url: string };

  /** Both servers, the standby second: libpq's multi-host form. */
  const url = (applicationName: string) =>
    `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/gateway?target_session_attrs=read-write&application_name=${applicationName}`;

  beforeAll(async () => {
    primary = await ThrowawayPostgres.start();
    // Migrated before the copy, so the standby starts with the schema.
    database = await openDatabase({ databaseUrl: primary.url('gateway', 'failover-test'), poolSize: 2 });
    await database.close();
    standby = await ThrowawayPostgres.standbyOf(primary);
    database = await openDatabase({ databaseUrl: url('failover-test'), poolSize: 4, migrate: false });
    services = await createTestServices(database.db);
    gateway = await startGateway({ DATABASE_URL: url('gateway'), REDIS_URL: '', MIGRATE_ON_START: 'false' });
  });

  afterAll(async () => {
    if (gateway?.child.process.exitCode === null) {
      gateway.child.process.kill('SIGKILL');
      await gateway.child.exited;
    }
    await database?.close().catch(() => undefined);
    await Promise.all([primary?.destroy(), standby?.destroy()]);
  });

  it('the primary stops mid-burst and the standby is promoted: serving again, nothing lost or doubled', async () => {
    const payer = await seedTenant(services);
    const payee = await seedTenant(services);
    await fund(services, payer, FUNDED);
    // The seeded rows have reached the standby before the primary goes.
    const written = await scalarOf(primary, 'select pg_current_wal_lsn()::text as value');
    await waitUntil(
      async () =>
        (await scalarOf(standby, 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as value', [written])) === true,
      10_000,
    );
    const logFrom = gateway.child.output().length;
    let recovery = { ms: 0, probes: 0 };
    let promotedAt = 0;
    let failedAt = 0;
    const results = await burst(() => gateway.url, payer, payee, 'failover', {
      count: 300,
      concurrency: 16,
      faultAfter: 60,
      fault: async () => {
        failedAt = Date.now();
        await primary.stopServer('fast');
        await standby.promote();
        promotedAt = Date.now();
        recovery = await timeUntilServing(gateway.url, payer, payee, 'failover');
      },
    });
    expect(gateway.child.process.exitCode).toBeNull();
    const failed = results.filter((t) => !succeeded(t));
    // Cut requests are 503 with Retry-After (the usual database fault), nothing else.
    expect(failed.filter((t) => t.outcome !== 503 || t.retryAfter === null)).toEqual([]);
    const retried = await retryFailed(gateway.url, payer, payee, failed);
    // This test's own pool learns of the new primary the same way: its next checkout fails, the one
    // after probes both hosts.
    await waitUntil(
      () =>
        database.db.execute(sql`select 1`).then(
          () => true,
          () => false,
        ),
      10_000,
    );
    await expectExactlyOnce(
      services,
      payer,
      payee,
      [...results.map((t) => t.reference), `failover-probe-${recovery.probes - 1}`],
      FUNDED,
    );
    expect(linesMatching(gateway.child, logFrom, /Unhandled 'error' event|uncaughtException/)).toBe(0);
    console.log(
      `[fault figures] failover: ${JSON.stringify({
        requests: results.length,
        failed: failed.length,
        outcomes: tally(results),
        primaryDownToPromotedMs: promotedAt - failedAt,
        recoveryAfterPromotionMs: recovery.ms,
        retriesMs: retried.ms,
        conflicts: retried.conflicts,
      })}`,
    );
  });
});

/** One value from a server, on a connection of its own. */
async function scalarOf(server: ThrowawayPostgres, text: string, values: unknown[] = []): Promise<unknown> {
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    return (await client.query(text, values)).rows[0].value;
  } finally {
    await client.end();
  }
}
