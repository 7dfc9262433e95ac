import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { currentClaim, fenceTransaction } from './job-fence.js';

/**
 * Which pool a piece of work takes its connections from:
 * - `request`: everything a request does (every mutation, so every money movement, its lookups
 *   and authentication), and anything not marked otherwise;
 * - `read`: list pages and searches, the reads that can be slow (see `readsOf`);
 * - `jobs`: background work (job runner, event relay, watchers).
 * With separate pools a flood of slow lists or a backlog of jobs holds only its own connections,
 * so a transfer never waits for a connection behind them.
 *
 * A request's work is routed by which database handle the code uses, not by an async-local store:
 * such a store makes Node 20 run a hook on every promise a request creates (measured: 5 µs of a
 * 29 µs REST request and 12 µs of a 96 µs GraphQL one, docs/benchmarks.md).
 */
export type PoolClass = 'request' | 'read' | 'jobs';

/** Background work's pool, carried through its async calls (workers.ts); requests never enter it. */
const background = new AsyncLocalStorage<PoolClass>();

/** Runs `work` (and everything it starts, timers included) on the given pool. */
export function runOnPool<T>(pool: PoolClass, work: () => T): T {
  return background.run(pool, work);
}

const readHandles = new WeakMap<object, object>();

/** Registers `reads` as the handle on the read pool of the database `db` (client.ts, once per database). */
export function registerReads<T extends object>(db: T, reads: T): void {
  readHandles.set(db, reads);
}

/**
 * The handle a list page or search reads through: the read pool's, so slow lists queue only
 * behind each other. The database itself where it has no read pool (PGlite, one pool for all).
 */
export function readsOf<T extends object>(db: T): T {
  return (readHandles.get(db) as T | undefined) ?? db;
}

/**
 * A pool that hands out the connections of the pool the current work belongs to (see PoolClass).
 * It is a pg.Pool so Drizzle treats it as one (it takes a client for each transaction); it holds
 * no connections of its own.
 */
export class RoutedPool extends pg.Pool {
  /**
   * @param route the pool of work outside background work: `request` for the database's main
   *   handle, `read` for its read handle (see readsOf).
   */
  constructor(
    private readonly pools: Record<PoolClass, pg.Pool>,
    private readonly route: 'request' | 'read' = 'request',
  ) {
    super({ max: 1 });
  }

  override connect(...args: unknown[]): never {
    const target = this.pools[background.getStore() ?? this.route];
    if (args.length > 0) return (target.connect as (...a: unknown[]) => unknown).apply(target, args) as never;
    // Drizzle takes a client for a transaction only; a job handler's transactions are fenced.
    const client = target.connect().then(releaseOnFailedBegin);
    return (currentClaim() ? client.then(fenceOnBegin) : client) as never;
  }

  override query(...args: unknown[]): never {
    const target = this.pools[background.getStore() ?? this.route];
    return (target.query as (...a: unknown[]) => unknown).apply(target, args) as never;
  }

  override async end(): Promise<void> {
    await Promise.all(this.distinct().map((p) => p.end()));
  }

  /** The pools behind this one, each once (a class of size 0 shares the request pool). */
  distinct(): pg.Pool[] {
    return [...new Set(Object.values(this.pools))];
  }
}

// The gauges (in use, idle, waiting) read these: the sums over the pools behind.
for (const name of ['totalCount', 'idleCount', 'waitingCount'] as const)
  Object.defineProperty(RoutedPool.prototype, name, {
    get(this: RoutedPool) {
      return this.distinct().reduce((n, p) => n + p[name], 0);
    },
  });

const textOf = (args: unknown[]): string | undefined => {
  const first = args[0];
  if (typeof first === 'string') return first;
  const text = (first as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
};

const BEGIN = /^\s*(begin|start\s+transaction)\b/i;

/**
 * Drizzle sends BEGIN before the try whose `finally` releases the client, so a BEGIN that fails
 * (the connection cut, the server restarting) would keep the client checked out for good: a few
 * such faults and the pool has no connections left. The client's first query is watched: if it is
 * a BEGIN and fails, the client is released with the error, which discards the connection.
 */
function releaseOnFailedBegin(client: pg.PoolClient): pg.PoolClient {
  const query = client.query;
  let first = true;
  client.query = ((...args: unknown[]) => {
    const result = (query as (...a: unknown[]) => unknown).apply(client, args);
    if (!first) return result;
    first = false;
    client.query = query;
    const text = textOf(args);
    if (typeof text !== 'string' || !BEGIN.test(text) || typeof (result as Promise<unknown>)?.then !== 'function')
      return result;
    return Promise.resolve(result).catch((error: unknown) => {
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    });
  }) as never;
  return client;
}

/**
 * Runs the lease fence right after the client's transaction begins (see job-fence.ts). When the
 * lease is lost the transaction is rolled back and the client released here: Drizzle releases a
 * client only once its BEGIN succeeded.
 */
function fenceOnBegin(client: pg.PoolClient): pg.PoolClient {
  const query = client.query;
  const release = client.release;
  const restore = () => {
    client.query = query;
    client.release = release;
  };
  const raw = (text: string, values?: unknown[]) =>
    (query as (t: string, v?: unknown[]) => Promise<pg.QueryResult>).call(client, text, values);
  client.query = ((...args: unknown[]) => {
    const text = textOf(args);
    const result = (query as (...a: unknown[]) => unknown).apply(client, args);
    if (typeof text !== 'string' || !BEGIN.test(text)) return result;
    client.query = query;
    return (result as Promise<unknown>).then(async (begun) => {
      try {
        await fenceTransaction(raw);
      } catch (error) {
        await raw('rollback').catch(() => undefined);
        restore();
        client.release();
        throw error;
      }
      return begun;
    });
  }) as never;
  client.release = ((...args: unknown[]) => {
    restore();
    return (release as (...a: unknown[]) => unknown).apply(client, args);
  }) as never;
  return client;
}
