import type pg from 'pg';

/**
 * A statement on its own connection of `pool`, as `pool.query` runs it, except after the server
 * refuses it (a unique violation, a division by zero: an error with its SQLSTATE):
 *
 * - PostgreSQL sends the error before it rolls the statement's transaction back, and keeps its
 *   locks (advisory ones included) until the rollback is over. pg-pool's own `query` hands the
 *   error over at once, so a caller retrying at once on another connection (a one-statement write
 *   whose reference met a concurrent row, run again under the same Idempotency-Key) could find its
 *   own key's lock still taken and answer "still being processed". Here the error is handed over
 *   only once the connection is ready again (a `select 1` queued behind the error runs after
 *   ReadyForQuery, which the server sends when the rollback is over).
 * - pg-pool discards a connection after any error; a refused statement leaves a healthy one, so it
 *   goes back to the pool (no reconnect per refusal). A connection that fails otherwise is discarded.
 *
 * Only the promise form is handled here; a call with a callback goes to `pool.query` as it is.
 */
export function settledQuery(pool: pg.Pool, args: unknown[]): Promise<pg.QueryResult> | undefined {
  if (args.some((arg) => typeof arg === 'function')) return undefined;
  return run(pool, args);
}

async function run(pool: pg.Pool, args: unknown[]): Promise<pg.QueryResult> {
  const connection = await pool.connect();
  let result: pg.QueryResult;
  try {
    result = await (connection.query as (...a: unknown[]) => Promise<pg.QueryResult>).apply(connection, args);
  } catch (error) {
    if (!refusedByServer(error)) {
      connection.release(asError(error));
      throw error;
    }
    const broken = await connection.query('select 1').then(
      () => undefined,
      (failure: unknown) => asError(failure),
    );
    connection.release(broken);
    throw error;
  }
  connection.release();
  return result;
}

/** Whether the server refused a statement (a database error with its SQLSTATE), not a lost connection. */
export function refusedByServer(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && typeof e.severity === 'string';
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
