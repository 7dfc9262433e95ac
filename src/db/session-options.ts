/**
 * The isolation level every gateway session runs at, set at connect. The one-statement money
 * writes count on READ COMMITTED: an `on conflict` insert that meets a row committed after the
 * statement's snapshot waits and then skips it (a taken reference, a 409); under REPEATABLE READ,
 * which a server, database or role default could impose, PostgreSQL refuses it with a
 * serialization failure instead, answered 500. A transaction that needs more names its level in
 * its BEGIN, which still wins.
 */
const READ_COMMITTED = '-c default_transaction_isolation=read\\ committed';

/**
 * No parallel workers for the gateway's queries, unless the operator's options say otherwise (they
 * come after it). A gateway runs many short queries at once: a parallel plan takes cores from the
 * other requests, and on a small host it is slower on its own too. A bill search that tests each
 * of an owner's 100,000 index entries took 108–114 ms with two workers on two cores and 40–42 ms
 * without, reading half the buffers (docs/benchmarks.md, "Lists at 2M rows over 1,000 users").
 */
const SERIAL_PLANS = '-c max_parallel_workers_per_gather=0';

/**
 * A connection string and the `options` startup parameter to connect with: serial plans, then the
 * options the operator gave (the URL's `options`, the last one as node-postgres reads it, else
 * `PGOPTIONS`, which node-postgres reads only when the config has none), which may turn parallel
 * plans back on, then the isolation level, so it wins over anything they set. The URL's `options` move into the parameter, since
 * node-postgres lets the URL's replace the config's.
 */
export function withSessionOptions(
  connectionString: string,
  env: NodeJS.ProcessEnv = process.env,
): { connectionString: string; options: string } {
  const after = (own: string | undefined) =>
    own ? `${SERIAL_PLANS} ${own} ${READ_COMMITTED}` : `${SERIAL_PLANS} ${READ_COMMITTED}`;
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a WHATWG URL (the database client refuses those earlier): passed on as given.
    return { connectionString, options: after(env['PGOPTIONS']) };
  }
  const own = url.searchParams.getAll('options').at(-1);
  if (own === undefined) return { connectionString, options: after(env['PGOPTIONS']) };
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options: after(own) };
}
