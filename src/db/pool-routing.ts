import pg from 'pg';
import { fenceTransaction, type LeaseClaim, LeaseLostError } from './job-fence.js';
import { settledQuery } from './settled-query.js';

/**
 * Which pool a piece of work takes its connections from:
 * - `request`: everything a request does (every mutation, so every money movement, its lookups
 *   and authentication), and anything not marked otherwise;
 * - `read`: list pages and searches, the reads that can be slow (see `readsOf`);
 * - `jobs`: background work (job runner, schedules, watchers; see `jobsOf`, `fencedOf`; the event
 *   relay has a connection of its own).
 * With separate pools a flood of slow lists or a backlog of jobs holds only its own connections,
 * so a transfer never waits for a connection behind them.
 *
 * Work is routed by which database handle its code uses, not by an async-local store: any enabled
 * store makes Node 20 run a hook on every promise the process creates (measured: 5 µs of a 29 µs
 * REST request and 12 µs of a 96 µs GraphQL one, docs/benchmarks.md). A request's code uses the
 * application's handle and, for lists, `readsOf` it; a job's code is the same code bound to its
 * job's handle (database-binding.ts).
 */
export type PoolClass = 'request' | 'read' | 'jobs';

/** The other handles of one database, registered when it is opened (client.ts). */
export interface DatabaseHandles<T> {
  /** On the read pool (lists and searches). */
  reads: T;
  /** On the jobs pool (the runner's own statements, schedules, watchers). */
  jobs: T;
  /** On the jobs pool, every transaction fenced by the claim's lease (job-fence.ts). */
  fenced(claim: LeaseClaim): T;
}

const handles = new WeakMap<object, DatabaseHandles<object>>();
/** Each other handle → the application handle of its database. */
const owners = new WeakMap<object, object>();

export function registerHandles<T extends object>(db: T, others: DatabaseHandles<T>): void {
  handles.set(db, others);
  owners.set(others.reads, db);
  owners.set(others.jobs, db);
}

/**
 * The application handle of the database a handle reads and writes: for what is cached per
 * database (account ids), whichever handle asks.
 */
export function databaseOf<T extends object>(handle: T): T {
  return (owners.get(handle) as T | undefined) ?? handle;
}

/**
 * The handle a list page or search reads through: the read pool's, so slow lists queue only
 * behind each other. The database itself where it has no other handles (a job's handle, tests).
 */
export function readsOf<T extends object>(db: T): T {
  return (handles.get(db)?.reads as T | undefined) ?? db;
}

/** The handle background work uses: the jobs pool's. */
export function jobsOf<T extends object>(db: T): T {
  return (handles.get(db)?.jobs as T | undefined) ?? db;
}

/** A job handler's handle: the jobs pool's, every transaction beginning with the claim's fence. */
export function fencedOf<T extends object>(db: T, claim: LeaseClaim): T {
  const registered = handles.get(db);
  if (!registered) throw new Error('fencedOf: the database was not opened by openDatabase');
  const fenced = registered.fenced(claim) as T;
  owners.set(fenced, db);
  fencedHandles.add(fenced);
  return fenced;
}

const fencedHandles = new WeakSet<object>();

/**
 * The long-lived handle that runs a statement outside a transaction exactly as `db` does: for a
 * job's fenced handle (made per job run), its database's jobs handle, whose pool it shares (only
 * its transactions are fenced); any other handle itself. For what is built once per handle
 * (prepared-once.ts), which a handle made per job would otherwise build again for every job.
 */
export function unfencedOf<T extends object>(db: T): T {
  return fencedHandles.has(db) ? jobsOf(databaseOf(db)) : db;
}

/**
 * A pool that hands out the connections of the pool the current work belongs to (see PoolClass).
 * It is a pg.Pool so Drizzle treats it as one (it takes a client for each transaction); it holds
 * no connections of its own.
 */
export class RoutedPool extends pg.Pool {
  /** @param route the pool this handle's work takes its connections from. */
  constructor(
    private readonly pools: Record<PoolClass, pg.Pool>,
    private readonly route: PoolClass = 'request',
  ) {
    super({ max: 1 });
  }

  override connect(...args: unknown[]): never {
    // Drizzle takes a client for a transaction only.
    return connectWatched(this.pools[this.route], args);
  }

  override query(...args: unknown[]): never {
    const target = this.pools[this.route];
    return (settledQuery(target, args) ?? (target.query as (...a: unknown[]) => unknown).apply(target, args)) as never;
  }

  override async end(): Promise<void> {
    await Promise.all(this.distinct().map((p) => p.end()));
  }

  /** The pools behind this one, each once (a class of size 0 shares the request pool). */
  distinct(): pg.Pool[] {
    return [...new Set(Object.values(this.pools))];
  }

  /**
   * The pools behind this one with their class, each once: a class of size 0 shares the request
   * pool, so its connections are the request pool's and are not listed twice.
   */
  named(): Array<{ name: PoolClass; pool: pg.Pool }> {
    const listed = new Set<pg.Pool>();
    const named: Array<{ name: PoolClass; pool: pg.Pool }> = [];
    for (const name of ['request', 'read', 'jobs'] as const) {
      const pool = this.pools[name];
      if (listed.has(pool)) continue;
      listed.add(pool);
      named.push({ name, pool });
    }
    return named;
  }
}

/** Pools a database's work keeps beside the routed ones (the event relay's connection), by application handle. */
const sidePools = new WeakMap<object, Map<string, pg.Pool>>();

/** Lists a pool of the database's own under `name` (for its gauges) until the returned function is called. */
export function attachPool(db: object, name: string, pool: pg.Pool): () => void {
  const owner = databaseOf(db);
  const pools = sidePools.get(owner) ?? new Map<string, pg.Pool>();
  sidePools.set(owner, pools);
  pools.set(name, pool);
  return () => {
    if (pools.get(name) === pool) pools.delete(name);
  };
}

/**
 * Every PostgreSQL pool of a database by name (request, read, jobs as they exist, then attached
 * ones such as the relay's), for the connection gauges; none on PGlite.
 */
export function poolsOf(db: object): Array<{ name: string; pool: pg.Pool }> {
  const client = (db as { $client?: unknown }).$client;
  if (!(client instanceof pg.Pool)) return [];
  const routed = client instanceof RoutedPool ? client.named() : [{ name: 'request', pool: client }];
  const side = [...(sidePools.get(databaseOf(db))?.entries() ?? [])].map(([name, pool]) => ({ name, pool }));
  return [...routed, ...side];
}

/**
 * The jobs pool for one claim: each transaction (a client taken for one) begins with the lease
 * fence. Statements outside a transaction are not fenced: they commit on their own, as before.
 */
export class FencedPool extends pg.Pool {
  constructor(
    private readonly target: pg.Pool,
    private readonly claim: LeaseClaim,
  ) {
    super({ max: 1 });
  }

  /** A client whose transactions are fenced. */
  override connect(...args: unknown[]): never {
    return connectWatched(this.target, args, this.claim);
  }

  override query(...args: unknown[]): never {
    return (settledQuery(this.target, args) ??
      (this.target.query as (...a: unknown[]) => unknown).apply(this.target, args)) as never;
  }

  override async end(): Promise<void> {
    // The pool belongs to the database; a job's handle only borrows it.
  }
}

/**
 * A client of `target` whose BEGIN is watched (watchBegin, with the lease fence when there is a
 * claim), as a promise or, as pg also offers, to a callback `(error, client, done)`.
 */
function connectWatched(target: pg.Pool, args: unknown[], claim?: LeaseClaim): never {
  const watched = target.connect().then((client) => watchBegin(client, claim));
  const callback = args[0];
  if (typeof callback !== 'function') return watched as never;
  watched.then(
    (client) => callback(undefined, client, (error?: Error) => client.release(error)),
    (error: unknown) => callback(error, undefined, () => undefined),
  );
  return undefined as never;
}

const textOf = (args: unknown[]): string | undefined => {
  const first = args[0];
  if (typeof first === 'string') return first;
  const text = (first as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
};

const BEGIN = /^\s*(begin|start\s+transaction)\b/i;

/**
 * Watches a client's first query, which for a transaction is its BEGIN:
 * - Drizzle sends BEGIN before the try whose `finally` releases the client, so a BEGIN that fails
 *   (the connection cut, the server restarting) would keep the client checked out for good: a few
 *   such faults and the pool has no connections left. A failed BEGIN releases the client with the
 *   error, which discards the connection.
 * - With a claim, the lease fence runs right after BEGIN (see job-fence.ts). When the lease is lost
 *   the transaction is rolled back and the client released here, as Drizzle releases a client only
 *   once its BEGIN succeeded; when the fence fails otherwise, the connection is discarded.
 * The client's own `query` is put back before that first query runs, so a pooled connection never
 * comes back wrapped (a wrapper left on it would be wrapped again at its next checkout).
 */
function watchBegin(client: pg.PoolClient, claim?: LeaseClaim): pg.PoolClient {
  const hadOwnQuery = Object.hasOwn(client, 'query');
  const query = client.query as (...a: unknown[]) => unknown;
  const release = client.release;
  const restoreQuery = () => {
    if (hadOwnQuery) client.query = query as never;
    else delete (client as { query?: unknown }).query;
  };
  const raw = (text: string, values?: unknown[]) => query.call(client, text, values) as Promise<pg.QueryResult>;
  const releaseWith = (error?: Error) => {
    client.release = release;
    client.release(error);
  };
  // Released before any query (connect(callback) then done(), say): the wrapper goes too.
  client.release = ((...args: unknown[]) => {
    restoreQuery();
    client.release = release;
    return (release as (...a: unknown[]) => unknown).apply(client, args);
  }) as never;
  client.query = ((...args: unknown[]) => {
    restoreQuery();
    const result = query.apply(client, args);
    const text = textOf(args);
    if (typeof text !== 'string' || !BEGIN.test(text) || typeof (result as Promise<unknown>)?.then !== 'function')
      return result;
    return (result as Promise<unknown>).then(
      async (begun) => {
        if (!claim) return begun;
        try {
          await fenceTransaction(raw, claim);
        } catch (error) {
          // A lost lease leaves a healthy connection once rolled back; anything else (the fence's
          // statement or the rollback failing: a cut connection, a timeout) discards it.
          const rollback = await raw('rollback').then(
            () => undefined,
            (failure: unknown) => failure,
          );
          const broken = rollback ?? (error instanceof LeaseLostError ? undefined : error);
          releaseWith(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
          throw error;
        }
        return begun;
      },
      (error: unknown) => {
        releaseWith(error instanceof Error ? error : new Error(String(error)));
        throw error;
      },
    );
  }) as never;
  return client;
}
