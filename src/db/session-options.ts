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
 * A connection string and the `options` startup parameter to connect with: the options the
 * operator gave (the URL's `options`, the last one as node-postgres reads it, else `PGOPTIONS`,
 * which node-postgres reads only when the config has none) with the isolation level after them,
 * so it wins over anything they set. The URL's `options` move into the parameter, since
 * node-postgres lets the URL's replace the config's.
 */
export function withSessionOptions(
  connectionString: string,
  env: NodeJS.ProcessEnv = process.env,
): { connectionString: string; options: string } {
  const after = (own: string | undefined) => (own ? `${own} ${READ_COMMITTED}` : READ_COMMITTED);
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
