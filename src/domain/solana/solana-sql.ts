import type { Executor } from '../../db/client.js';
import { afterRun, type Statement } from '../../db/plain-sql.js';

interface PgLike {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}
interface PgliteLike {
  query(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  exec(text: string): Promise<unknown>;
}

/**
 * Runs a plain parameterised statement (db/plain-sql.ts) on a database or INSIDE a transaction,
 * on the transaction's own connection: a named prepared statement on PostgreSQL, an ordinary
 * parameterised query on PGlite. No query builder runs per call.
 */
export async function runIn<Row = Record<string, unknown>>(
  db: Executor,
  st: Statement,
  values: unknown[],
): Promise<Row[]> {
  const client = (db as unknown as { session: { client: PgLike | PgliteLike } }).session.client;
  const rows =
    typeof (client as PgliteLike).exec === 'function'
      ? (await (client as PgliteLike).query(st.text, values)).rows
      : (await (client as PgLike).query({ name: st.name, text: st.text, values })).rows;
  afterRun(st);
  return rows as Row[];
}
