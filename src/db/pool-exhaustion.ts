import type pg from 'pg';
import { POOL_CHECKOUT_TIMEOUT } from './faults.js';

const exhausted = new WeakMap<pg.Pool, number>();

/**
 * Counts the checkouts of `pool` that waited their whole timeout in the queue of a full pool
 * (faults.ts `pool-exhausted`): read by the metric gateway_db_pool_exhausted_total at a scrape.
 * Both ways in are counted, as pg-pool's own `query` takes its connection through `connect`.
 */
export function countExhaustion(pool: pg.Pool): void {
  exhausted.set(pool, 0);
  const connect = pool.connect.bind(pool) as (callback?: (...a: unknown[]) => void) => unknown;
  const seen = (error: unknown) => {
    if (error instanceof Error && POOL_CHECKOUT_TIMEOUT.test(error.message))
      exhausted.set(pool, (exhausted.get(pool) ?? 0) + 1);
  };
  pool.connect = ((callback?: (error: unknown, ...rest: unknown[]) => void) => {
    if (typeof callback === 'function')
      return connect((error: unknown, ...rest: unknown[]) => {
        seen(error);
        callback(error, ...rest);
      });
    return (connect() as Promise<pg.PoolClient>).catch((error: unknown) => {
      seen(error);
      throw error;
    });
  }) as pg.Pool['connect'];
}

/** How many checkouts of `pool` gave up waiting since it opened (0 for a pool not counted). */
export const exhaustedCheckouts = (pool: pg.Pool): number => exhausted.get(pool) ?? 0;
