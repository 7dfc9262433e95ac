import pg from 'pg';
import type { Database } from './client.js';

/**
 * A pool of `max` connections of its own, with the settings of the database's own pools (host list,
 * timeouts, client class), for work that must never queue behind requests or jobs for a pooled
 * connection (the event relay, the wake channel's listener); undefined on PGlite, whose one
 * connection is shared by everything.
 */
export function dedicatedPool(db: Database, max = 1): pg.Pool | undefined {
  const client = (db as unknown as { $client?: unknown }).$client;
  if (!(client instanceof pg.Pool)) return undefined;
  const routed = client as pg.Pool & { distinct?: () => pg.Pool[] };
  const base = typeof routed.distinct === 'function' ? (routed.distinct()[0] ?? client) : client;
  const settings = (base as unknown as { options?: pg.PoolConfig }).options;
  if (!settings) return undefined;
  // Its connections are kept however long they idle (pg-pool closes one after 10 s by default): an
  // idle relay sleeps up to 30 s, and a new connection for each such round cost more than the round.
  const pool = new pg.Pool({ ...settings, max, idleTimeoutMillis: 0 });
  // A lost connection fails only what ran on it (its user reports that); the pool opens a new one.
  pool.on('error', () => undefined);
  pool.on('connect', (session) => session.on('error', () => undefined));
  return pool;
}
