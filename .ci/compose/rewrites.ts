/**
 * The only values of compose.yaml the deployment check changes, because one machine is not a
 * compose network. Every other variable reaches the processes as the file sets it.
 *
 *   postgres:5432 → 127.0.0.1:5432        the compose service's host name → the machine's PostgreSQL
 *   database gateway → the run's own       the machine's server is shared: each run migrates a
 *                                          database of its own (owned by the file's role), dropped at the end
 *   redis:6379 → 127.0.0.1:6379            the compose service's host name → the machine's Redis
 *   Redis database 0 → REDIS_DATABASE      its rate-limit counters stay out of the database the test suite uses
 *   PORT 4000 → a free port per instance   two processes on one host cannot share a port (in compose
 *   METRICS_PORT 9464 → the same            each container has its own)
 *
 * The URL's user and password (gateway:gateway) stay: the check creates that role when missing.
 * A file with several PostgreSQL services (compose.facade.yaml) names each its own database: each
 * is mapped to a run database of its own (`databases`), and a service another service calls by its
 * name (`http://upstream:4000`) to where that instance listens here (`hosts`).
 */

/** Host and port of a compose service → where it listens on this machine. */
export const HOSTS: Readonly<Record<string, string>> = {
  'postgres:5432': '127.0.0.1:5432',
  'redis:6379': '127.0.0.1:6379',
};

/** The Redis database index the check's instances use (the test suite uses 0). */
export const REDIS_DATABASE = '5';

export interface Rewrite {
  /** The throwaway PostgreSQL database of this run. */
  database: string;
  /** The file's database name → this run's, when the file has more than one. */
  databases?: Readonly<Record<string, string>>;
  /** More `host:port` → `127.0.0.1:port` mappings: the file's own instances. */
  hosts?: Readonly<Record<string, string>>;
  /** This instance's listeners. */
  port: number;
  metricsPort: number;
}

/** One variable's value with the listed rewrites applied. */
export function rewriteValue(name: string, value: string, rewrite: Rewrite): string {
  if (name === 'PORT') return String(rewrite.port);
  if (name === 'METRICS_PORT') return String(rewrite.metricsPort);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  const target = rewrite.hosts?.[url.host] ?? HOSTS[url.host];
  if (target === undefined) return value;
  url.host = target;
  if (/^postgres(ql)?:$/.test(url.protocol))
    url.pathname = `/${rewrite.databases?.[url.pathname.slice(1)] ?? rewrite.database}`;
  if (/^rediss?:$/.test(url.protocol)) url.pathname = `/${REDIS_DATABASE}`;
  // A bare origin stays bare (`http://upstream:4000` → `http://127.0.0.1:41002`, not `…/`).
  const bare = url.pathname === '/' && url.search === '' && url.hash === '' && !value.endsWith('/');
  return bare ? url.href.slice(0, -1) : url.href;
}

/** A process environment with the listed rewrites applied. */
export function rewriteEnvironment(env: Record<string, string>, rewrite: Rewrite): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, rewriteValue(name, value, rewrite)]));
}
