import type pg from 'pg';
import type { StatementCounter } from './statement-counter.js';

/**
 * Makes every idle connection of the pools report its statistics now, so pg_stat_database's
 * counters (commits) include all this server's work, and returns how many statements that took.
 *
 * Why: a PostgreSQL 15+ backend flushes its counters when it goes idle, but at most once a second;
 * one that goes idle sooner after its last flush keeps them pending until it has been idle for
 * 10 s (PGSTAT_IDLE_INTERVAL). A pool that stops at the end of a round therefore leaves about the
 * last second of its commits unreported for 10 s: read 1.1 s after a 3 s burst, pg_stat_database
 * showed 55 % of its commits, all of them at 11 s. Those commits then landed in the next row's
 * round. One statement on each connection more than a second after its last flush makes it flush
 * before it answers. Call it at least a second after the load stopped; each statement is a
 * transaction of its own that pg_stat_database counts, which the caller leaves out.
 */
export async function flushIdleSessions(pools: readonly pg.Pool[]): Promise<number> {
  let statements = 0;
  for (const pool of pools) {
    // Idle clients are handed out before any new connection is made: these are the pool's sessions.
    const clients = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
    try {
      await Promise.all(clients.map((client) => client.query('select 1')));
      statements += clients.length;
    } finally {
      for (const client of clients) client.release();
    }
  }
  return statements;
}

/**
 * A bench server's `GET /stats`: its pools' sessions flushed (above), then its statement counts
 * since the last call, the flushing statements left out of them and reported as `flushed`.
 */
export async function statsSinceLastCall(
  counter: StatementCounter,
  pools: readonly pg.Pool[],
): Promise<{ roundTrips: number; writingCommits: number; flushed: number }> {
  const flushed = await flushIdleSessions(pools);
  const { roundTrips, writingCommits } = counter.take();
  return { roundTrips: roundTrips - flushed, writingCommits, flushed };
}
