import pg from 'pg';

export interface HostPort {
  host: string;
  port: number;
}

/**
 * A libpq-style URL may name several servers: `postgres://u@h1:5432,h2:5433/db`. The gateway then
 * connects to whichever of them accepts writes (libpq's `target_session_attrs=read-write`, which
 * is implied and may be written), so a failover to a standby promoted at another address is
 * followed without a configuration change. Returns the hosts and a one-host URL (the first host)
 * that node-postgres parses for everything else (user, password, database, options).
 */
export function parseHosts(url: string): { hosts: HostPort[]; url: string } {
  const match = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/.exec(url);
  if (!match) return { hosts: [], url };
  const [, scheme, userInfo = '', hostList = '', rest = ''] = match;
  const hosts = hostList.split(',').map((entry): HostPort => {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 5432) };
    const [host, port] = entry.split(':');
    return { host: host ?? '', port: Number(port ?? 5432) };
  });
  const [path = '', query = ''] = rest.split('?');
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  if (attrs !== null && attrs !== 'read-write' && attrs !== 'primary' && hosts.length > 1)
    throw new Error(`target_session_attrs=${attrs} is not supported: the gateway needs a writable server`);
  params.delete('target_session_attrs');
  const rebuilt = `${scheme}${userInfo}${hostList.split(',')[0]}${path}${params.size > 0 ? `?${params}` : ''}`;
  return { hosts, url: rebuilt };
}

/** What a server that only reads answers to a write: the same SQLSTATE, so it is handled as read-only. */
class NoWritableServerError extends Error {
  readonly code = '25006';
  constructor(hosts: HostPort[]) {
    super(`None of ${hosts.map((h) => `${h.host}:${h.port}`).join(', ')} accepts writes now`);
  }
}

const IS_WRITABLE = "select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off' as writable";

/**
 * A node-postgres Client class (the pool's `Client`) that connects to the first writable host of
 * `hosts`: the host that was writable last time is tried first, and checked with one query once
 * connected; if it no longer is (it went down or became a standby), every host is probed in turn.
 * Each pool connection is one server session, so a failover shows as lost connections (503s, the
 * usual fault handling) until the new primary accepts connections.
 */
export function multiHostClient(base: typeof pg.Client, hosts: HostPort[]): typeof pg.Client {
  let writable: HostPort | undefined;
  return class MultiHostClient extends base {
    private readonly options: pg.ClientConfig;
    constructor(options: pg.ClientConfig) {
      super(options);
      this.options = options;
    }

    override connect(...args: unknown[]): never {
      const callback = args[0] as ((error: Error | null, client?: pg.Client) => void) | undefined;
      const connected = this.connectWritable();
      if (!callback) return connected as never;
      connected.then(
        () => callback(null, this as unknown as pg.Client),
        (error: Error) => callback(error),
      );
      return undefined as never;
    }

    private async connectWritable(): Promise<void> {
      const known = writable;
      if (known) {
        // A client connects once: when the host went away or became a standby, this checkout
        // fails (a 503) and the next one probes every host.
        aim(this as unknown as pg.Client, known);
        try {
          await super.connect();
        } catch (error) {
          writable = undefined;
          throw error;
        }
        const { rows } = await super.query<{ writable: boolean }>(IS_WRITABLE);
        if (rows[0]?.writable) return;
        writable = undefined;
        await this.end().catch(() => undefined);
        throw new NoWritableServerError(hosts);
      }
      let lastError: unknown = new NoWritableServerError(hosts);
      for (const host of hosts) {
        const probe = new pg.Client(this.options);
        aim(probe, host);
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          const { rows } = await probe.query<{ writable: boolean }>(IS_WRITABLE);
          if (!rows[0]?.writable) continue;
          writable = host;
          aim(this as unknown as pg.Client, host);
          await super.connect();
          return;
        } catch (error) {
          lastError = error;
        } finally {
          await probe.end().catch(() => undefined);
        }
      }
      throw lastError;
    }
  } as unknown as typeof pg.Client;
}

/** Points a client not yet connected at `host` (its URL names the first host). */
function aim(client: pg.Client, host: HostPort): void {
  const target = client as unknown as { host: string; port: number; connectionParameters: HostPort };
  target.host = host.host;
  target.port = host.port;
  target.connectionParameters.host = host.host;
  target.connectionParameters.port = host.port;
}
