import type { Database } from '../../src/db/client.js';

type Query = (...args: unknown[]) => unknown;

/**
 * Wraps `query` on every pool behind the database's handles (a routed pool's distinct pools: lists
 * read through the read pool's handle, see readsOf), so a bench server can count or time each
 * statement. `wrap` gets each pool's own query and returns the one to install; the result puts the
 * originals back.
 */
export function onEveryPoolQuery(db: Database, wrap: (query: Query) => Query): () => void {
  type Pool = { query: Query };
  const routed = (db as unknown as { $client: Pool & { distinct?: () => Pool[] } }).$client;
  const restores = (routed.distinct?.() ?? [routed]).map((pool) => {
    const query = pool.query;
    pool.query = wrap(query);
    return () => {
      pool.query = query;
    };
  });
  return () => {
    for (const restore of restores) restore();
  };
}
