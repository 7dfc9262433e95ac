import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Database, type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { jobsOf, readsOf } from '../../src/db/pool-routing.js';
import { systemClock } from '../../src/domain/clock.js';
import { type RelayLoop, startRelay } from '../../src/domain/events/relay.js';
import { createServices } from '../../src/services.js';
import { onPostgres, testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { MetricsText } from '../helpers/metrics-text.js';
import { waitUntil } from '../helpers/wait.js';

const SIZES = { request: 3, read: 2, jobs: 2 };
const IN_USE = 'gateway_db_pool_connections_in_use';
const IDLE = 'gateway_db_pool_connections_idle';
const WAITING = 'gateway_db_pool_waiting';

/** A transaction on `db` that keeps its connection until `release` is called. */
function holdConnection(db: Database): { held: Promise<void>; release: () => void; done: Promise<unknown> } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<void>((resolve) => (started = resolve));
  const done = db.transaction(async (tx) => {
    await tx.execute(sql`select 1`);
    started();
    await gate;
  });
  return { held, release, done };
}

describe.skipIf(!onPostgres)('database pool gauges (PostgreSQL)', () => {
  let database: DatabaseHandle;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let relay: RelayLoop | undefined;
  beforeAll(async () => {
    await testDatabase(); // migrated once for the worker
    database = await openDatabase({
      databaseUrl: testDatabaseUrl(),
      poolSize: SIZES.request,
      readPoolSize: SIZES.read,
      jobPoolSize: SIZES.jobs,
      migrate: false,
    });
    const config = loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED_DEMO: false, WORKERS: false });
    const services = createServices(config, database.db, systemClock, () => undefined);
    app = await buildApp({ services, logger: false });
    await app.ready();
  });
  afterAll(async () => {
    await relay?.stop();
    await app?.close();
    await database?.close();
  });

  it('reports each pool under its own label: a full read pool shows as such, beside an idle request pool', async () => {
    const { db } = database;
    const reads = [holdConnection(readsOf(db)), holdConnection(readsOf(db))];
    const job = holdConnection(jobsOf(db));
    await Promise.all([...reads, job].map((h) => h.held));
    // A third list query waits: the read pool has no connection left (a Drizzle query runs once awaited).
    const queued = Promise.resolve(readsOf(db).execute(sql`select 1`));
    let rounds = 0;
    relay = startRelay(db, { idleMs: 60_000, onRound: () => (rounds += 1) });
    try {
      // The relay has its connection once it finished a round; the queued query is waiting (by any
      // label); and the start's own first queries on the request pool have ended (on a busy machine
      // they may still run when the relay's first round is done).
      let metrics = await MetricsText.of(app);
      const byPool = (name: string) =>
        Object.fromEntries(metrics.series(name).map((s) => [s.labels.pool ?? '(no pool label)', s.value]));
      await waitUntil(async () => {
        metrics = await MetricsText.of(app);
        return rounds > 0 && metrics.sum(WAITING) === 1 && byPool(IN_USE).request === 0;
      }, 10_000);
      expect(byPool(IN_USE)).toEqual({ request: 0, read: 2, jobs: 1, relay: 0 });
      expect(byPool(WAITING)).toEqual({ request: 0, read: 1, jobs: 0, relay: 0 });
      expect(byPool(IDLE)).toMatchObject({ read: 0, relay: 1 });
    } finally {
      for (const h of [...reads, job]) h.release();
      await Promise.all([...reads, job].map((h) => h.done));
      await queued;
    }
    // A stopped relay leaves no series behind.
    await relay.stop();
    relay = undefined;
    expect((await MetricsText.of(app)).series(IN_USE).map((s) => s.labels.pool)).not.toContain('relay');
  });
});
