import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database } from './client.js';

/**
 * Plain parameterised SQL for the hottest statements, written once as text. On PostgreSQL it runs
 * as a named prepared statement (parsed and planned once per connection, then only bound and
 * executed); on PGlite as an ordinary parameterised query. No query builder runs per call: building
 * SQL through Drizzle cost more CPU than the database's own work on the transfer path.
 */
export interface Statement {
  /** Unique per text: PostgreSQL keeps one prepared statement of this name per connection. */
  readonly name: string;
  readonly text: string;
}

export const statement = (name: string, text: string): Statement => ({ name, text });

type Runner = (st: Statement, values: unknown[]) => Promise<Record<string, unknown>[]>;
const runners = new WeakMap<Database, Runner>();

function runnerOf(db: Database): Runner {
  let runner = runners.get(db);
  if (runner) return runner;
  const client = (db as unknown as { $client: pg.Pool | PGlite }).$client;
  runner =
    client instanceof pg.Pool
      ? async (st, values) => (await client.query({ name: st.name, text: st.text, values })).rows
      : async (st, values) => (await (client as PGlite).query<Record<string, unknown>>(st.text, values)).rows;
  runners.set(db, runner);
  return runner;
}

/**
 * Runs one statement on its own (autocommit: the statement is its transaction, one round trip,
 * one commit) and returns its rows. Values are the driver's: strings for bigints and uuids.
 */
export function runStatement<Row = Record<string, unknown>>(
  db: Database,
  st: Statement,
  values: unknown[],
): Promise<Row[]> {
  return runnerOf(db)(st, values) as Promise<Row[]>;
}
