import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database, Executor } from './client.js';

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
  /** Whether it inserts outbox events: every run tells the `onEventWrites` listeners. */
  readonly writesEvents: boolean;
  /** Whether it inserts jobs: every run tells the `onJobWrites` listeners. */
  readonly writesJobs: boolean;
}

export const statement = (name: string, text: string): Statement => ({
  name,
  text,
  writesEvents: /\binsert\s+into\s+events\b/i.test(text),
  writesJobs: /\binsert\s+into\s+jobs\b/i.test(text),
});

const eventWriteListeners = new Set<() => void>();

/**
 * Told after a statement that writes outbox events has run (whether or not it inserted any): the
 * event relay registers here (relay.ts) so that it looks at once instead of at its idle poll. One
 * place for every runner, so no statement that writes events can forget to wake it.
 */
export function onEventWrites(listener: () => void): () => void {
  eventWriteListeners.add(listener);
  return () => eventWriteListeners.delete(listener);
}

/** A job write this process made: its lane and due time when the writer knows them. */
export interface JobWrite {
  lane?: string;
  runAt?: Date;
}

const jobWriteListeners = new Set<(write: JobWrite) => void>();

/**
 * Told when this process has written a job (a statement that inserts jobs has run, or `enqueueJob`
 * inserted one; its transaction may commit a moment later): the job runner registers here
 * (job-runner.ts) so that an idle lane, sleeping long, looks when the job falls due instead of at its
 * longest idle wait.
 */
export function onJobWrites(listener: (write: JobWrite) => void): () => void {
  jobWriteListeners.add(listener);
  return () => jobWriteListeners.delete(listener);
}

/** Tells the `onJobWrites` listeners of a job written. */
export function tellJobWrite(write: JobWrite = {}): void {
  for (const listener of jobWriteListeners) listener(write);
}

/** What every runner does after a statement has run. */
export function afterRun(st: Statement): void {
  if (st.writesEvents) for (const listener of eventWriteListeners) listener();
  if (st.writesJobs) tellJobWrite();
}

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
  return runnerOf(db)(st, values).then((rows) => {
    afterRun(st);
    return rows as Row[];
  });
}

/** Runs one statement inside a transaction opened by `inTransaction`. */
export type TransactionRunner = <Row = Record<string, unknown>>(st: Statement, values: unknown[]) => Promise<Row[]>;

/** Where a failed transaction stopped: at its BEGIN, in a statement, or at its COMMIT. */
export class TransactionFailure extends Error {
  constructor(
    readonly phase: 'begin' | 'work' | 'commit',
    override readonly cause: unknown,
  ) {
    super(`transaction failed at ${phase}`, { cause });
  }
}

/**
 * Runs `work` in one transaction on one connection (a pooled client on PostgreSQL, PGlite's own
 * transaction otherwise), its statements prepared as `runStatement`'s are. Rejects with a
 * `TransactionFailure` telling where it failed: before COMMIT nothing was written; a failure AT
 * commit leaves the outcome unknown (the connection may have died after the server committed).
 */
export async function inTransaction<T>(db: Database, work: (run: TransactionRunner) => Promise<T>): Promise<T> {
  const client = (db as unknown as { $client: pg.Pool | PGlite }).$client;
  if (!(client instanceof pg.Pool)) {
    let phase: 'begin' | 'work' | 'commit' = 'begin';
    try {
      let result: T | undefined;
      await (client as PGlite).transaction(async (tx) => {
        phase = 'work';
        result = await work(async <Row>(st: Statement, values: unknown[]) => {
          const rows = (await tx.query<Row>(st.text, values)).rows;
          afterRun(st);
          return rows;
        });
        phase = 'commit';
      });
      return result as T;
    } catch (error) {
      throw new TransactionFailure(phase, error);
    }
  }
  let connection: pg.PoolClient;
  try {
    connection = await client.connect();
    await connection.query('begin');
  } catch (error) {
    // A failed BEGIN has already released (and discarded) its client: see pool-routing.ts.
    throw new TransactionFailure('begin', error);
  }
  let result: T;
  try {
    result = await work(async <Row>(st: Statement, values: unknown[]) => {
      const rows = (await connection.query({ name: st.name, text: st.text, values })).rows as Row[];
      afterRun(st);
      return rows;
    });
  } catch (error) {
    const broken = await connection.query('rollback').then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    connection.release(broken);
    throw new TransactionFailure('work', error);
  }
  try {
    await connection.query('commit');
  } catch (error) {
    connection.release(error instanceof Error ? error : new Error(String(error)));
    throw new TransactionFailure('commit', error);
  }
  connection.release();
  return result;
}

interface PgLike {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}
interface PgliteLike {
  query(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  exec(text: string): Promise<unknown>;
}

/**
 * Runs a plain parameterised statement on a database or INSIDE a Drizzle transaction, on the
 * transaction's own connection: a named prepared statement on PostgreSQL, an ordinary
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
