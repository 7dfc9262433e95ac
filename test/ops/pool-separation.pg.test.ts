import { sql } from 'drizzle-orm';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { enqueueJob, type JobHandler, type JobOutcome } from '../../src/domain/jobs/job-runner.js';
import { createServices } from '../../src/services.js';
import { startWorkers, type Workers } from '../../src/workers.js';
import { seedTenant, type TestApp } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { rest } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';
import { fund } from '../helpers/wallet.js';

/** How long the list queries and jobs hold their connections: what a transfer would wait behind. */
const HOLD_MS = 5_000;
const SIZES = { request: 4, read: 3, jobs: 3 };

/** A job that holds a connection for HOLD_MS (a slow reconcile, say). */
let holdConnection: JobHandler;
let firstJobDoneAt = Number.POSITIVE_INFINITY;

/**
 * Saturates the read pool with list requests that wait on a lock (as slow list queries would) and
 * the jobs pool with jobs that hold their connections, then times one P2P transfer. `shared`
 * gives reads and jobs the request pool, as one pool for everything would.
 */
async function transferUnderLoad(url: string, shared: boolean): Promise<{ ms: number; beforeAnyFreed: boolean }> {
  const database: DatabaseHandle = await openDatabase({
    databaseUrl: url,
    poolSize: SIZES.request,
    readPoolSize: shared ? 0 : SIZES.read,
    jobPoolSize: shared ? 0 : SIZES.jobs,
  });
  const config = loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED_DEMO: false, WORKERS: false });
  const services = createServices(config, database.db, systemClock, () => undefined);
  const app = await buildApp({ services, logger: false });
  await app.ready();
  const t: TestApp = { app, services, close: async () => undefined };
  firstJobDoneAt = Number.POSITIVE_INFINITY;
  const hold = {
    kind: 'test.hold-connection',
    // Through its own property, as every handler reaches its services: the runner binds it to the
    // job's handle on the jobs pool (database-binding.ts).
    db: services.db,
    async run(this: { db: typeof services.db }): Promise<JobOutcome> {
      await this.db.execute(sql.raw(`select pg_sleep(${HOLD_MS / 1000})`));
      firstJobDoneAt = Math.min(firstJobDoneAt, Date.now());
      return { status: 'done' };
    },
  };
  holdConnection = hold;
  const [payer, payee] = [await seedTenant(services), await seedTenant(services)];
  await fund(t, payer, 1_000);
  const locker = new pg.Client({ connectionString: url });
  const locker2 = new pg.Client({ connectionString: url });
  await Promise.all([locker.connect(), locker2.connect()]);
  const lockerPid = (await locker.query('select pg_backend_pid() as pid')).rows[0].pid;
  let workers: Workers | undefined;
  try {
    // Lists of bill records wait on this lock for HOLD_MS, each holding a connection meanwhile.
    await locker.query('begin');
    await locker.query('lock table bill_records in access exclusive mode');
    let releasedAt = Number.POSITIVE_INFINITY;
    const released = locker
      .query(`select pg_sleep(${HOLD_MS / 1000})`)
      .then(() => locker.query('rollback'))
      .then(() => {
        releasedAt = Date.now();
      });
    // An amount filter counts from bill_records itself: an unfiltered list's total comes from the
    // kept counts, and an empty list never reads the locked table.
    const lists = Array.from({ length: SIZES.request + SIZES.read + 2 }, () =>
      rest(t, payer.keys.FULL_ACCESS)('GET', '/api/v1/bills/records?minAmount=1'),
    );
    for (let i = 0; i < SIZES.request + SIZES.jobs + 2; i++)
      await enqueueJob(services.db, { kind: holdConnection.kind, runAt: new Date(), tenant: `t${i}` });
    workers = startWorkers(services, app.log, [holdConnection]);
    const count = async (where: string) =>
      Number(
        (
          await locker2.query(
            `select count(*) as n from pg_stat_activity where datname = current_database() and pid not in ($1, pg_backend_pid()) and ${where}`,
            [lockerPid],
          )
        ).rows[0].n,
      );
    // Saturated: every connection of the read pool waits on the lock and every one of the jobs
    // pool sleeps (or every connection of the one shared pool does either).
    if (shared) {
      await waitUntil(async () => (await count("state = 'active'")) >= SIZES.request, 10_000);
    } else {
      await waitUntil(async () => (await count("wait_event_type = 'Lock'")) >= SIZES.read, 10_000);
      await waitUntil(async () => (await count("query like 'select pg_sleep%'")) >= SIZES.jobs, 10_000);
    }
    const started = Date.now();
    const response = await rest(t, payer.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', {
      amount: 1,
      recipient: payee.user.id,
      reference: `pool-${shared}-${Date.now()}`,
    });
    const finishedAt = Date.now();
    expect(response.statusCode, response.body).toBe(201);
    await released;
    for (const list of await Promise.all(lists)) expect(list.statusCode).toBe(200);
    return { ms: finishedAt - started, beforeAnyFreed: finishedAt < Math.min(releasedAt, firstJobDoneAt) };
  } finally {
    await Promise.all([locker.end(), locker2.end()]);
    await workers?.stop(HOLD_MS * 2);
    await app.close();
    await database.close();
  }
}

describe.skipIf(!onPostgres)('money requests have connections of their own (PostgreSQL)', () => {
  let url: string;
  beforeAll(async () => {
    url = await isolatedTestDatabaseUrl();
  });

  it('a transfer completes quickly while lists and jobs hold every connection of their pools', async () => {
    const { ms, beforeAnyFreed } = await transferUnderLoad(url, false);
    console.info(`transfer with separate pools, read and jobs pools saturated: ${ms} ms`);
    expect(beforeAnyFreed).toBe(true);
    expect(ms).toBeLessThan(1_500);
  }, 60_000);

  it('with one shared pool the same transfer waits behind them (what the separation prevents)', async () => {
    const { ms, beforeAnyFreed } = await transferUnderLoad(url, true);
    console.info(`transfer with one shared pool under the same load: ${ms} ms`);
    expect(beforeAnyFreed).toBe(false);
  }, 60_000);
});
