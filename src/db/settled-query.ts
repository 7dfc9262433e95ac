import type pg from 'pg';

/**
 * A statement on its own connection of `pool`, as `pool.query` runs it, except after the server
 * refuses it (an error with its SQLSTATE):
 *
 * - PostgreSQL sends the error before it rolls the statement's transaction back, and keeps its
 *   locks (advisory ones included) until the rollback is over. pg-pool's own `query` hands the
 *   error over at once, so a caller retrying at once on another connection (a one-statement write
 *   whose reference met a concurrent row, run again under the same Idempotency-Key) could find its
 *   own key's lock still taken and answer "still being processed". Here the error is handed over
 *   only once the connection is ready again (a `select 1` queued behind the error runs after
 *   ReadyForQuery, which the server sends when the rollback is over), or after SETTLE_MS at most.
 * - pg-pool discards a connection after any error. A refusal of the statement's own data or rows
 *   (KEPT_AFTER) leaves a healthy connection, so it goes back to the pool (no reconnect per unique
 *   violation). Anything else is discarded as before: a refusal that would repeat on the same
 *   connection (a prepared statement whose result type a migration changed: 0A000, every run
 *   again) heals only with a new connection.
 *
 * Only the promise form is handled here; a callback, a query object with its own callback or a
 * submittable (a cursor, a stream) goes to `pool.query` as it is.
 */
export function settledQuery(pool: pg.Pool, args: unknown[]): Promise<pg.QueryResult> | undefined {
  if (args.some((arg) => typeof arg === 'function')) return undefined;
  const first = args[0] as { callback?: unknown; submit?: unknown } | undefined;
  if (typeof first === 'object' && first !== null && (first.callback !== undefined || first.submit !== undefined))
    return undefined;
  return run(pool, args);
}

/** The longest a refused statement's error waits for its connection to be ready again. */
const SETTLE_MS = 2_000;

/**
 * SQLSTATEs that refuse one statement and leave its session as it was: data exceptions (22),
 * integrity constraints (23), a serialization failure or deadlock (40001, 40P01), a cancelled
 * statement or a lock not granted (57014, 55P03), a trigger's or function's own RAISE (P0001).
 */
const KEPT_AFTER = /^(22|23)|^(40001|40P01|57014|55P03|P0001)$/;

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
    const settled = await settle(connection);
    const code = (error as { code: string }).code;
    const severity = (error as { severity: string }).severity;
    const keep = settled === undefined && severity === 'ERROR' && KEPT_AFTER.test(code);
    connection.release(keep ? undefined : (settled ?? asError(error)));
    throw error;
  }
  connection.release();
  return result;
}

/** Waits until the connection has answered a `select 1` (undefined) or failed or timed out (the error). */
function settle(connection: pg.PoolClient): Promise<Error | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error('the connection did not settle after a refused statement')), SETTLE_MS);
  });
  const ready = connection.query('select 1').then(
    () => undefined,
    (failure: unknown) => asError(failure),
  );
  return Promise.race([ready, timeout]).finally(() => clearTimeout(timer));
}

/** Whether the server refused a statement (a database error with its SQLSTATE), not a lost connection. */
export function refusedByServer(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && typeof e.severity === 'string';
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
