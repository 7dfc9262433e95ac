/**
 * Which database errors are the database's trouble rather than the request's: a lost or refused
 * connection, a server shutting down or starting up, a read-only server (a standby, or
 * `default_transaction_read_only`), one of our own session timeouts, or a pool with no connection
 * free in time. Requests that hit one are answered 503 with Retry-After; background loops back off
 * instead of logging each failure.
 */
import { causesOf } from './sql-state.js';

/**
 * `pool-exhausted`: every connection of the pool stayed taken for as long as a checkout waits
 * (DATABASE_CONNECT_TIMEOUT_MS), and nothing was sent to the server. This process is at capacity,
 * which is no outage: readiness stays up and the request answers 503 BUSY. (Were the server down
 * too, the connections being opened for the pool fail as `unavailable`, and readiness says so.)
 */
export type DatabaseFault = 'unavailable' | 'read-only' | 'timeout' | 'pool-exhausted';

/** SQLSTATEs of a server that cannot serve us now (class 08 is matched by prefix). */
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, smart/fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57P05', // idle_session_timeout
  '25P03', // idle_in_transaction_session_timeout: our own limit ended the session
  '53300', // too_many_connections
  '53000', // insufficient_resources
  '58000', // system_error
]);
const READ_ONLY_STATES = new Set(['25006']); // read_only_sql_transaction
const TIMEOUT_STATES = new Set(['57014', '55P03']); // query_canceled (statement_timeout), lock_not_available

/** Socket-level failures node-postgres passes through as they are. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/** node-postgres and pg-pool errors that carry no code. */
const DRIVER_MESSAGES = [
  /connection terminated/i,
  /not queryable/i,
  /connection error/i,
  /server closed the connection unexpectedly/i,
];

/**
 * pg-pool's checkout that waited its whole connectionTimeoutMillis in the queue of a full pool. It
 * is raised only there: a new connection that cannot be opened in time fails as "Connection
 * terminated due to connection timeout" (above: the server's trouble).
 */
export const POOL_CHECKOUT_TIMEOUT = /^timeout exceeded when trying to connect$/i;

/** The fault behind `error` (drizzle wraps the driver's error as `cause`), or undefined for any other error. */
export function databaseFaultOf(error: unknown): DatabaseFault | undefined {
  for (const current of causesOf(error)) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (code.startsWith('08') && code.length === 5) return 'unavailable';
      if (UNAVAILABLE_STATES.has(code) || NETWORK_CODES.has(code)) return 'unavailable';
      if (READ_ONLY_STATES.has(code)) return 'read-only';
      if (TIMEOUT_STATES.has(code)) return 'timeout';
    }
    // Only the driver's own messages are matched; drizzle's wrapper ("Failed query: …") is not.
    if (typeof message === 'string' && !message.startsWith('Failed query')) {
      if (POOL_CHECKOUT_TIMEOUT.test(message)) return 'pool-exhausted';
      if (DRIVER_MESSAGES.some((m) => m.test(message))) return 'unavailable';
    }
  }
  return undefined;
}

/** A line about a database error that is safe to log: its code and the driver's message, never the query or its parameters. */
export function describeDatabaseError(error: unknown): string {
  for (const current of causesOf(error)) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof message === 'string' && !message.startsWith('Failed query')) {
      return typeof code === 'string' ? `${code}: ${message}` : message;
    }
  }
  return 'database error';
}
