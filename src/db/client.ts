import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import { TracedPgClient, TracedPgPool, tracePglite } from '../observability/db-tracing.js';
import * as schema from './schema.js';
import { grantApplicationRole } from './app-role.js';
import { FencedPool, type PoolClass, RoutedPool, registerHandles } from './pool-routing.js';
import { countExhaustion } from './pool-exhaustion.js';
import { fenceTransaction, type LeaseClaim } from './job-fence.js';
import { multiHostClient, parseHosts } from './multi-host.js';
import { withSessionOptions } from './session-options.js';
import { isLockTimeout } from './sql-state.js';
import { MIGRATIONS_FOLDER } from './migrations-folder.js';
import { createPglite } from './pglite-engine.js';
import {
  defaultImageDirs,
  type FoundImage,
  findImage,
  readImage,
  startOverUnfinishedImage,
  writeImageInto,
} from './pglite-image.js';

export { MIGRATIONS_FOLDER };

export type Schema = typeof schema;
/** What PGlite and node-postgres drizzle instances, and their transactions, have in common. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
/** Either the database or an open transaction: stores accept both so services choose the boundary. */
export type Executor = Database | Tx;

export interface DatabaseHandle {
  db: Database;
  driver: 'pglite' | 'postgres';
  /** A description safe to log (no password). */
  describe: string;
  /**
   * Listens for errors of pooled connections, in use or idle (a terminated backend, a restart, a
   * lost network). The connection is discarded either way; the listener only learns of it.
   */
  onConnectionError(listener: (error: Error) => void): void;
  close(): Promise<void>;
  /** node-postgres only: the pool, for its in-use and waiting gauges. */
  pool?: pg.Pool;
}

/**
 * Limits every session of the application sets (milliseconds; 0 turns one off), so one stuck
 * statement or transaction cannot hold locks (or vacuum's cleanup horizon) for everyone.
 */
export interface SessionTimeouts {
  statementMs: number;
  lockMs: number;
  idleInTransactionMs: number;
}

export const DEFAULT_SESSION_TIMEOUTS: SessionTimeouts = {
  statementMs: 30_000,
  lockMs: 10_000,
  idleInTransactionMs: 30_000,
};

/** Arbitrary, fixed: every instance takes this advisory lock before migrating. */
const MIGRATION_LOCK_KEY = 7_262_020_001;

export interface OpenOptions {
  databaseUrl?: string | undefined;
  pgliteDataDir?: string;
  /** PGlite only: a prepared data dump (see test/helpers) to start from instead of initdb. */
  pgliteLoadDataDir?: Blob;
  /**
   * PGlite only: where to look for a migrated image (pglite-image.ts) to start a new database from.
   * Default: beside the build, then the install's cache; [] makes it from its migrations.
   */
  pgliteImageDirs?: readonly string[];
  /** Connections of the request pool (everything a request does but its lists and searches). */
  poolSize?: number;
  /** Connections of the read pool (lists and searches, see readsOf) and of the jobs pool; 0 shares the request pool. Default 0. */
  readPoolSize?: number;
  jobPoolSize?: number;
  sessionTimeouts?: SessionTimeouts;
  /**
   * How long taking a pooled connection (a free one, or a new one) may wait before the query fails
   * (a 503) instead of hanging. Unset: no limit.
   */
  connectTimeoutMs?: number;
  /** Apply pending migrations while opening (default). Off when a release step runs `npm run migrate`. */
  migrate?: boolean;
  /** PostgreSQL only: the owner's URL to migrate through, when `databaseUrl` is a separate application role. */
  migrationUrl?: string | undefined;
}

export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl)
    return openPostgres(
      options.databaseUrl,
      { request: options.poolSize ?? 20, read: options.readPoolSize ?? 0, jobs: options.jobPoolSize ?? 0 },
      options.sessionTimeouts ?? DEFAULT_SESSION_TIMEOUTS,
      options.connectTimeoutMs ?? 0,
      options.migrate ?? true,
      options.migrationUrl,
    );
  return openPglite(
    options.pgliteDataDir ?? 'memory://',
    options.pgliteLoadDataDir,
    options.migrate ?? true,
    options.pgliteImageDirs ?? defaultImageDirs(),
  );
}

async function openPostgres(
  url: string,
  sizes: Record<PoolClass, number>,
  timeouts: SessionTimeouts,
  connectTimeoutMs: number,
  migrate: boolean,
  migrationUrl: string | undefined,
): Promise<DatabaseHandle> {
  const listeners = new Set<(error: Error) => void>();
  const tell = (error: Error) => {
    for (const listener of listeners) listener(error);
  };
  // Several hosts: connect to whichever accepts writes (a failover to another address is followed).
  const { hosts, url: oneHostUrl } = parseHosts(url);
  const Client = hosts.length > 1 ? multiHostClient(TracedPgClient, hosts) : TracedPgClient;
  const session = withSessionOptions(oneHostUrl);
  const newPool = (max: number) => {
    const pool = new TracedPgPool({
      connectionString: session.connectionString,
      options: session.options,
      max,
      Client,
      connectionTimeoutMillis: connectTimeoutMs,
      // A peer that vanished (failover, cable) is noticed by TCP keepalive instead of never.
      keepAlive: true,
      statement_timeout: timeouts.statementMs,
      lock_timeout: timeouts.lockMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    });
    // pg-pool listens for errors only while a connection is idle; a connection in use (inside a
    // transaction, between its queries) whose backend is terminated emits 'error' with no listener,
    // which would end the process. Every connection gets its own listener for its whole life: the
    // query in flight fails on its own, and the pool drops the broken connection when it is released.
    pool.on('connect', (client) => client.on('error', tell));
    pool.on('error', () => undefined);
    countExhaustion(pool);
    return pool;
  };
  const request = newPool(sizes.request);
  const pools = {
    request,
    read: sizes.read > 0 ? newPool(sizes.read) : request,
    jobs: sizes.jobs > 0 ? newPool(sizes.jobs) : request,
  };
  const pool = new RoutedPool(pools);
  if (migrate && migrationUrl) {
    const appRole = (await request.query('select current_user as name')) as unknown as pg.QueryResult<{
      name: string;
    }>;
    await migrateAsOwner(migrationUrl, appRole.rows[0]!.name);
  } else if (migrate) await migratePostgres(request);
  const db = drizzlePg(pool, { schema }) as unknown as Database;
  const handleOn = (route: PoolClass) =>
    route === 'request' ? db : (drizzlePg(new RoutedPool(pools, route), { schema }) as unknown as Database);
  registerHandles(db, {
    reads: handleOn('read'),
    jobs: handleOn('jobs'),
    // Made per job run (about 0.2 µs without the schema, 30 µs with it): no relational queries
    // (`db.query`) run in this gateway, so a job's handle needs none.
    fenced: (claim) => drizzlePg(new FencedPool(pools.jobs, claim)) as unknown as Database,
  });
  const safeUrl = new URL(oneHostUrl);
  safeUrl.password = '';
  return {
    db,
    driver: 'postgres',
    describe: `PostgreSQL ${hosts.map((h) => `${h.host}:${h.port}`).join(',') || safeUrl.host}${safeUrl.pathname}`,
    onConnectionError: (listener) => listeners.add(listener),
    close: () => pool.end(),
    pool,
  };
}

/** Applies pending migrations under an advisory lock, so instances starting together never race. */
export async function migratePostgres(pool: pg.Pool, options: MigrationOptions = {}): Promise<void> {
  checkMigrationOptions(options);
  await migrateUnderLock(await pool.connect(), options);
}

/**
 * Refuses waits and counts that would not do what they say, before any connection is taken: a lock
 * timeout of 0 is PostgreSQL's "wait forever" (the very queue the timeout exists to avoid), and a
 * fraction or NaN would reach SQL as text it refuses.
 */
function checkMigrationOptions({ lockTimeoutMs, attempts, pauseMs }: MigrationOptions): void {
  const whole = (name: string, value: number | undefined, min: number, max: number) => {
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max))
      throw new RangeError(`migrations: ${name} must be a whole number from ${min} to ${max}; it was ${value}.`);
  };
  whole('lockTimeoutMs', lockTimeoutMs, 1, 2_147_483_647);
  whole('attempts', attempts, 1, 10_000);
  whole('pauseMs', pauseMs, 0, 3_600_000);
}

/** Migrates as the tables' owner, then (re)grants the application role its rights on every table. */
async function migrateAsOwner(ownerUrl: string, appRole: string): Promise<void> {
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 1 });
  owner.on('error', () => undefined);
  try {
    const client = await owner.connect();
    const ownerRole = await client.query<{ name: string }>('select current_user as name');
    await migrateUnderLock(client, {
      after: async () => {
        // Same role: nothing to grant, and revoking would take the owner's own rights.
        if (ownerRole.rows[0]!.name !== appRole) await grantApplicationRole(drizzlePg(client, { schema }), appRole);
      },
    });
  } finally {
    await owner.end();
  }
}

export interface MigrationOptions {
  /** Default: this release's migrations. */
  folder?: string;
  /** How long one attempt's statement may wait for a table lock before the attempt is rolled back. */
  lockTimeoutMs?: number;
  /** Attempts in all before the lock wait is an error. */
  attempts?: number;
  /** Pause between attempts. */
  pauseMs?: number;
  /** Told of each attempt that gave up waiting for a lock (default: a line on stderr). */
  onLockTimeout?: (attempt: number, attempts: number) => void;
  /** Run after the migrations, still under the advisory lock. */
  after?: () => Promise<void>;
}

/**
 * Applies pending migrations under the advisory lock (then `after`, still under it), and releases
 * the client. A migration's DDL that waits for a table lock (behind a long report's transaction,
 * say) makes every later query of that table queue behind it: each attempt waits at most
 * `lockTimeoutMs` for a lock, then all its migrations roll back (they run in one transaction), the
 * queue behind it drains, and it tries again, `attempts` times in all (about 2 minutes by default)
 * before failing with the lock named by PostgreSQL's error.
 */
async function migrateUnderLock(client: pg.PoolClient, options: MigrationOptions): Promise<void> {
  const {
    folder = MIGRATIONS_FOLDER,
    lockTimeoutMs = 3_000,
    attempts = 30,
    pauseMs = 1_000,
    onLockTimeout = (attempt, all) =>
      process.stderr.write(
        `migrations: attempt ${attempt} of ${all} waited ${lockTimeoutMs} ms for a lock; retrying\n`,
      ),
  } = options;
  let failure: Error | undefined;
  try {
    // The advisory lock may wait for another instance's whole migration: no limits for it.
    await client.query('set statement_timeout = 0; set lock_timeout = 0');
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`set lock_timeout = ${lockTimeoutMs}`);
      for (let attempt = 1; ; attempt++) {
        try {
          await migratePg(drizzlePg(client, { schema }), { migrationsFolder: folder });
          break;
        } catch (error) {
          if (!isLockTimeout(error) || attempt >= attempts) throw error;
          onLockTimeout(attempt, attempts);
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      }
      await client.query('set lock_timeout = 0');
      await options.after?.();
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      // After a failure the connection is discarded below, which ends its session and the lock with
      // it: an unlock that fails then (the connection is what failed) must not hide the error.
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch((error: unknown) => {
        if (!failure) throw error;
      });
    }
    await client.query('reset statement_timeout; reset lock_timeout');
  } catch (error) {
    failure ??= error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    // A failed migration leaves the session's timeouts changed (and may have broken the connection):
    // it goes, rather than back to the pool it came from.
    client.release(failure);
  }
}

/** The embedded database's files are locked by another process (a running server, say). */
export class DatabaseInUseError extends Error {
  constructor(
    readonly dataDir: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The embedded database at ${dataDir} is in use by another process. Stop it, or set PGLITE_DATA_DIR or DATABASE_URL.`,
      options,
    );
  }
}

async function openPglite(
  dataDir: string,
  loadDataDir: Blob | undefined,
  migrate: boolean,
  imageDirs: readonly string[],
): Promise<DatabaseHandle> {
  let release: (() => Promise<void>) | undefined;
  if (!dataDir.startsWith('memory://')) {
    mkdirSync(dataDir, { recursive: true });
    try {
      // A second process opening the same files would corrupt them; refuse instead.
      release = await lockfile.lock(dataDir, { stale: 15_000, update: 5_000 });
    } catch (error) {
      throw new DatabaseInUseError(dataDir, { cause: error });
    }
  }
  const { client, image } = await startPglite(dataDir, loadDataDir, migrate, imageDirs);
  const db = drizzlePglite(client, { schema });
  // One connection: reads and jobs share it; a job's handle fences its transactions.
  registerHandles(db as unknown as Database, {
    reads: db as unknown as Database,
    jobs: db as unknown as Database,
    fenced: (claim) => drizzlePglite(fencedPglite(client, claim)) as unknown as Database,
  });
  const where = dataDir.startsWith('memory://') ? 'PGlite (in memory)' : `PGlite ${dataDir}`;
  return {
    db: db as unknown as Database,
    driver: 'pglite',
    describe: image ? `${where}, made from ${image.path} (${image.migrations} migrations)` : where,
    // One in-process connection: nothing can terminate it from outside.
    onConnectionError: () => undefined,
    close: async () => {
      await client.close();
      await release?.();
    },
  };
}

/**
 * Starts the embedded database, migrated when `migrate` says so. A new one (no files yet, no dump
 * given) starts from the migrated image of this release's migrations when one is at hand (a build
 * puts it beside itself, `npm install` in its cache: see pglite-image.ts), so only migrations newer
 * than the image run. An image that cannot be loaded or migrated (a damaged file) is reported and
 * set aside: the files it left are removed and the database is made as it is without one.
 */
async function startPglite(
  dataDir: string,
  loadDataDir: Blob | undefined,
  migrate: boolean,
  imageDirs: readonly string[],
): Promise<{ client: PGlite; image?: FoundImage }> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) startOverUnfinishedImage(dataDir);
  const isNew = inMemory || readdirSync(dataDir).length === 0;
  const image = loadDataDir || !isNew ? undefined : findImage(MIGRATIONS_FOLDER, imageDirs);
  if (image) {
    let client: PGlite | undefined;
    try {
      // In memory, PGlite loads the tar itself; a folder gets the files written by Node, faster.
      if (inMemory) client = tracePglite(await createPglite(dataDir, readImage(image.path)));
      else {
        writeImageInto(image.path, dataDir);
        client = tracePglite(await createPglite(dataDir));
      }
      if (migrate) await migrateEmbedded(client);
      return { client, image };
    } catch (error) {
      process.stderr.write(
        `embedded database: the image ${image.path} could not be used (${error instanceof Error ? error.message : String(error)}); making the database from its migrations instead\n`,
      );
      await client?.close().catch(() => undefined);
      emptyDataDir(dataDir);
    }
  }
  const client = tracePglite(await createPglite(dataDir, loadDataDir));
  if (migrate) await migrateEmbedded(client);
  return { client };
}

/** Applies pending migrations under the advisory lock every instance takes (one connection here). */
async function migrateEmbedded(client: PGlite): Promise<void> {
  if (await holdsEveryMigration(client)) return;
  const db = drizzlePglite(client);
  await db.execute(`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
  await migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER });
  await db.execute(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
}

/**
 * Whether the embedded database holds every migration of this release. Drizzle applies those whose
 * journal time is after the newest it has recorded; when there is none, one query says so, where
 * its migrator reads and hashes every file, runs its DDL and an empty transaction (about a tenth of
 * a second of every start).
 */
async function holdsEveryMigration(client: PGlite): Promise<boolean> {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ when: number }>;
  };
  const newestInRelease = Math.max(...journal.entries.map((entry) => entry.when));
  try {
    const { rows } = await client.query<{ newest: number | string | null }>(
      'select max(created_at) as newest from drizzle.__drizzle_migrations',
    );
    return rows[0]?.newest != null && Number(rows[0].newest) >= newestInRelease;
  } catch {
    return false; // never migrated: no such table yet
  }
}

/** Removes what a failed start left in a data directory that was empty before it. */
function emptyDataDir(dataDir: string): void {
  if (dataDir.startsWith('memory://')) return;
  for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true });
}

/**
 * PGlite as a job's handle sees it: its transactions begin with the claim's lease fence (see
 * job-fence.ts), as on PostgreSQL; everything else is the client's own, called on the client
 * itself (PGlite keeps its state per instance, so a method must run with the client as `this`).
 */
function fencedPglite(client: PGlite, claim: LeaseClaim): PGlite {
  const transaction = ((callback: (tx: Parameters<Parameters<PGlite['transaction']>[0]>[0]) => Promise<unknown>) =>
    client.transaction(async (tx) => {
      await fenceTransaction((text, values) => tx.query(text, values), claim);
      return callback(tx);
    })) as PGlite['transaction'];
  return new Proxy(client, {
    get(target, key) {
      if (key === 'transaction') return transaction;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Runs raw SQL and returns its rows, hiding the drivers' different result shapes. */
export async function queryRows<Row = Record<string, unknown>>(db: Executor, query: SQL): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as { rows: Row[] };
  return result.rows;
}
