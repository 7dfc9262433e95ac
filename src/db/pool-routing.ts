import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { AuditOrigin } from '../domain/audit/request-context.js';
import { currentClaim, fenceTransaction } from './job-fence.js';

/**
 * Which pool a piece of work takes its connections from:
 * - `request`: HTTP writes (every mutation, so every money movement), authentication, and anything
 *   not marked otherwise;
 * - `read`: HTTP reads (REST GET, GraphQL queries: lists, lookups);
 * - `jobs`: background work (job runner, event relay, watchers).
 * With separate pools a flood of slow lists or a backlog of jobs holds only its own connections,
 * so a transfer never waits for a connection behind them.
 */
export type PoolClass = 'request' | 'read' | 'jobs';

/**
 * What a piece of work carries through its async calls: its pool and, for a request, where it came
 * from (audit origin, see request-context.ts). One store for both: every store of an
 * AsyncLocalStorage is copied onto every promise and async resource created while it is set.
 */
export interface Scope {
  pool: PoolClass;
  /** A GraphQL mutation was seen: the request stays on the request pool (batched queries do not move it). */
  pinned?: boolean;
  origin?: AuditOrigin;
}

const storage = new AsyncLocalStorage<Scope>();

/** Runs `work` (and everything it starts, timers included) on the given pool; an origin stays. */
export function runOnPool<T>(pool: PoolClass, work: () => T): T {
  const origin = storage.getStore()?.origin;
  return storage.run(origin ? { pool, origin } : { pool }, work);
}

/**
 * Called once per HTTP request, before anything else: reads go to the read pool, the rest to the
 * request pool; `origin` is the request's audit origin. (`enterWith`, not `run`: a request body
 * arrives on the connection's own async context, which a `run` in a hook would not reach.)
 */
export function enterHttpRequest(method: string, origin?: AuditOrigin): void {
  storage.enterWith({ pool: method === 'GET' || method === 'HEAD' ? 'read' : 'request', origin });
}

/** The current work's scope (pool and origin), if any. */
export function currentScope(): Scope | undefined {
  return storage.getStore();
}

/** Sets the current work's audit origin, keeping its pool (or the request pool when there is none). */
export function enterOrigin(origin: AuditOrigin): void {
  const scope = storage.getStore();
  storage.enterWith({ pool: scope?.pool ?? 'request', ...(scope?.pinned ? { pinned: true } : {}), origin });
}

/** Once a GraphQL request's operation is known: queries read, mutations (and subscriptions) use the request pool. */
export function routeOperation(operation: 'query' | 'mutation' | 'subscription'): void {
  const route = storage.getStore();
  if (!route || route.pinned) return;
  if (operation === 'query') route.pool = 'read';
  else {
    route.pool = 'request';
    route.pinned = true;
  }
}

export function currentPoolClass(): PoolClass {
  return storage.getStore()?.pool ?? 'request';
}

/**
 * A pool that hands out the connections of the pool the current work belongs to (see PoolClass).
 * It is a pg.Pool so Drizzle treats it as one (it takes a client for each transaction); it holds
 * no connections of its own.
 */
export class RoutedPool extends pg.Pool {
  constructor(private readonly pools: Record<PoolClass, pg.Pool>) {
    super({ max: 1 });
  }

  override connect(...args: unknown[]): never {
    const target = this.pools[currentPoolClass()];
    if (args.length > 0) return (target.connect as (...a: unknown[]) => unknown).apply(target, args) as never;
    // Drizzle takes a client for a transaction only; a job handler's transactions are fenced.
    const client = target.connect().then(releaseOnFailedBegin);
    return (currentClaim() ? client.then(fenceOnBegin) : client) as never;
  }

  override query(...args: unknown[]): never {
    const target = this.pools[currentPoolClass()];
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
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
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
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
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
