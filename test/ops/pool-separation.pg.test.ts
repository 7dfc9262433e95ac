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

/**
 * How long the lists and jobs hold their connections when nothing releases them sooner. A transfer
 * that is not stuck behind them answers first however slow the machine is; one stuck behind them
 * answers only after this (then the verdict below is "waited"), so the hold ends a failing run
 * instead of its test's cap.
 */
const HOLD_AT_MOST_MS = 60_000;
const SIZES = { request: 4, read: 3, jobs: 3 };
/** The advisory lock a holding job waits on, held by the test until it releases everything. */
const HOLD_LOCK = 4_242_4242;

/** A job that holds a connection until the test releases it (a slow reconcile, say). */
let holdConnection: JobHandler;

/**
 * Saturates the read pool with list requests that wait on a lock (as slow list queries would) and
 * the jobs pool with jobs that hold their connections, then sends one P2P transfer, and releases
 * the lists and jobs only once it has answered (or after HOLD_AT_MOST_MS). `shared` gives reads
 * and jobs the request pool, as one pool for everything would: then the transfer needs a
 * connection that only a release frees, so the release comes first.
 */
async function transferUnderLoad(url: string, shared: boolean): Promise<{ ms: number; beforeAnyFreed: boolean }> {
  const database: DatabaseHandle = await openDatabase({
    databaseUrl: url,
    poolSize: SIZES.request,
    readPoolSize: shared ? 0 : SIZES.read,
    jobPoolSize: shared ? 0 : SIZES.jobs,
    // The held lists wait on a lock until the release, however long a loaded machine takes to get there.
    sessionTimeouts: { statementMs: 0, lockMs: 0, idleInTransactionMs: 0 },
  });
  const config = loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED_DEMO: false, WORKERS: false });
  const services = createServices(config, database.db, systemClock, () => undefined);
  const app = await buildApp({ services, logger: false });
  await app.ready();
  const t: TestApp = { app, services, close: async () => undefined };
  const hold = {
    kind: 'test.hold-connection',
    // Through its own property, as every handler reaches its services: the runner binds it to the
    // job's handle on the jobs pool (database-binding.ts).
    db: services.db,
    async run(this: { db: typeof services.db }): Promise<JobOutcome> {
      await this.db.execute(sql.raw(`select pg_advisory_xact_lock_shared(${HOLD_LOCK})`));
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
  let releasing: Promise<void> | undefined;
  let fallback: NodeJS.Timeout | undefined;
  const release = () => {
    releasing ??= (async () => {
      clearTimeout(fallback);
      await locker.query('rollback');
      await locker.query(`select pg_advisory_unlock(${HOLD_LOCK})`);
    })();
    return releasing;
  };
  try {
    // Queued first: with one shared pool, the held lists leave no connection to queue them with.
    for (let i = 0; i < SIZES.request + SIZES.jobs + 2; i++)
      await enqueueJob(services.db, { kind: holdConnection.kind, runAt: new Date(), tenant: `t${i}` });
    // Lists of bill records wait on this lock, each holding a connection meanwhile; jobs wait on
    // the advisory lock.
    await locker.query(`select pg_advisory_lock(${HOLD_LOCK})`);
    await locker.query('begin');
    await locker.query('lock table bill_records in access exclusive mode');
    // An amount filter counts from bill_records itself: an unfiltered list's total comes from the
    // kept counts, and an empty list never reads the locked table.
    const lists = Array.from({ length: SIZES.request + SIZES.read + 2 }, () =>
      rest(t, payer.keys.FULL_ACCESS)('GET', '/api/v1/bills/records?minAmount=1'),
    );
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
    // Saturated (with one shared pool, its SIZES.request connections are all busy: the transfer
    // has none to run on until the release): every connection of the read pool waits on the lock and every one of the jobs
    // pool waits on the advisory lock (or every connection of the one shared pool does either).
    if (shared) {
      await waitUntil(async () => (await count("state = 'active'")) >= SIZES.request);
    } else {
      await waitUntil(async () => (await count("wait_event_type = 'Lock'")) >= SIZES.read + SIZES.jobs);
    }
    fallback = setTimeout(() => void release(), HOLD_AT_MOST_MS);
    const started = Date.now();
    const answer = rest(t, payer.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', {
      amount: 1,
      recipient: payee.user.id,
      reference: `pool-${shared}-${Date.now()}`,
    });
    // With one pool nothing else would free a connection: release, and the transfer must follow.
    if (shared) await release();
    const response = await answer;
    const finishedAt = Date.now();
    // Jobs and lists finish only after a release: none had begun when the transfer answered.
    const beforeAnyFreed = releasing === undefined;
    await release();
    expect(response.statusCode, response.body).toBe(201);
    for (const list of await Promise.all(lists)) expect(list.statusCode).toBe(200);
    return { ms: finishedAt - started, beforeAnyFreed };
  } finally {
    clearTimeout(fallback);
    await release().catch(() => undefined);
    await Promise.all([locker.end(), locker2.end()]);
    await workers?.stop(HOLD_AT_MOST_MS);
    await app.close();
    await database.close();
  }
}

describe.skipIf(!onPostgres)('money requests have connections of their own (PostgreSQL)', () => {
  let url: string;
  beforeAll(async () => {
    url = await isolatedTestDatabaseUrl();
  });

  it('a transfer completes while lists and jobs hold every connection of their pools', async () => {
    const { ms, beforeAnyFreed } = await transferUnderLoad(url, false);
    console.info(`transfer with separate pools, read and jobs pools saturated: ${ms} ms`);
    expect(beforeAnyFreed).toBe(true);
  });

  it('with one shared pool the same transfer waits behind them (what the separation prevents)', async () => {
    const { ms, beforeAnyFreed } = await transferUnderLoad(url, true);
    console.info(`transfer with one shared pool under the same load: ${ms} ms`);
    expect(beforeAnyFreed).toBe(false);
  });
});
