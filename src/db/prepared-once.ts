import type { Executor } from './client.js';
import { unfencedOf } from './pool-routing.js';

/**
 * A query built once per database handle and run by `execute` after: for a read on a hot path,
 * where building the SQL through the query builder on every call cost more CPU than running it.
 * On PostgreSQL the query is also a named prepared statement (give it a name unique in the
 * project). A job's fenced handle, made per job run, uses the query built for its database's jobs
 * handle: outside a transaction (where a prepared query runs) the two send to the same pool.
 */
export function preparedOnce<T>(prepare: (db: Executor) => T): (db: Executor) => T {
  const built = new WeakMap<Executor, T>();
  return (given) => {
    const db = unfencedOf(given);
    let query = built.get(db);
    if (query === undefined) built.set(db, (query = prepare(db)));
    return query;
  };
}
