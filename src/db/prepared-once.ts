import type { Executor } from './client.js';

/**
 * A query built once per database handle and run by `execute` after: for a read on a hot path,
 * where building the SQL through the query builder on every call cost more CPU than running it.
 * On PostgreSQL the query is also a named prepared statement (give it a name unique in the
 * project).
 */
export function preparedOnce<T>(prepare: (db: Executor) => T): (db: Executor) => T {
  const built = new WeakMap<Executor, T>();
  return (db) => {
    let query = built.get(db);
    if (query === undefined) built.set(db, (query = prepare(db)));
    return query;
  };
}
