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
 * A connection string and the `options` startup parameter to connect with: the URL's own
 * `options` (node-postgres would let them replace the config's) moved into the parameter, with
 * the isolation level after them, so it wins over anything they set.
 */
export function withSessionOptions(connectionString: string): { connectionString: string; options: string } {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a URL node-postgres would parse as one (a socket path): connected as given.
    return { connectionString, options: READ_COMMITTED };
  }
  const own = url.searchParams.get('options');
  if (own === null) return { connectionString, options: READ_COMMITTED };
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options: own ? `${own} ${READ_COMMITTED}` : READ_COMMITTED };
}
