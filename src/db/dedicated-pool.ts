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
  const pool = new pg.Pool({ ...settings, max });
  // A lost connection fails only what ran on it (its user reports that); the pool opens a new one.
  pool.on('error', () => undefined);
  pool.on('connect', (session) => session.on('error', () => undefined));
  return pool;
}
