import type { Database } from '../../src/db/client.js';
import { jobsOf, readsOf } from '../../src/db/pool-routing.js';

type Query = (...args: unknown[]) => unknown;

/**
 * Wraps `query` on the pool of every handle of the database (its own, the read pool's handle lists
 * read through, see readsOf, and the jobs' handle), so a bench server can count or time each
 * statement sent outside a transaction. The routed pools' `query` is where those statements enter
 * (it checks a connection out of the pool behind it, see db/settled-query.ts), so the wrap is there
 * and not on the pools behind. `wrap` gets each pool's own query and returns the one to install;
 * the result puts the originals back.
 */
export function onEveryPoolQuery(db: Database, wrap: (query: Query) => Query): () => void {
  type Pool = { query: Query };
  const pools = new Set(
    [db, readsOf(db), jobsOf(db)].map((handle) => (handle as unknown as { $client: Pool }).$client),
  );
  const restores = [...pools].map((pool) => {
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
