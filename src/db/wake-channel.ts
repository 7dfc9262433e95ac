import pg from 'pg';
import type { Database } from './client.js';
import { dedicatedPool } from './dedicated-pool.js';
import { jobsOf } from './pool-routing.js';

/** The PostgreSQL channel on which processes tell each other of new events and jobs. */
export const WAKE_CHANNEL = 'gateway_wake';

/**
 * What a wake announces: events to stamp (the relay), jobs written (the job runner), or a sandbox
 * test clock changed (read the attached clocks again, sandbox/test-clocks.ts).
 */
export type Wake = 'events' | 'jobs' | 'clocks';
const WAKES: readonly Wake[] = ['events', 'jobs', 'clocks'];

export interface WakeSender {
  send(wake: Wake): void;
  stop(): void;
}

/**
 * Sends wakes to the other instances: `NOTIFY gateway_wake` through the jobs pool (never a
 * request's connection, never inside the writer's transaction: a NOTIFY there would queue every
 * commit of the server behind the notification queue's lock). Events are announced by an instance
 * that runs no relay (WORKERS=false); jobs by every instance, as another's idle lane may take them
 * sooner than this one's full lane. At most one per wake kind every `everyMs`: the writes of a
 * window are told as one at its end. A wake that fails is dropped (the idle wait still finds the
 * work). A no-op on PGlite, which no other process shares.
 */
export function wakeSender(db: Database, everyMs = 100): WakeSender {
  const pool = (jobsOf(db) as unknown as { $client?: unknown }).$client;
  if (!(pool instanceof pg.Pool)) return { send: () => undefined, stop: () => undefined };
  // Sent at the end of each window, not at its start: the writer's transaction, which told of the
  // write before its commit, has most often committed by then, so the woken instance finds it.
  const windows = new Map<Wake, NodeJS.Timeout>();
  let stopped = false;
  return {
    send(wake) {
      if (stopped || windows.has(wake)) return;
      const timer = setTimeout(() => {
        windows.delete(wake);
        if (!stopped) void pool.query('select pg_notify($1, $2)', [WAKE_CHANNEL, wake]).catch(() => undefined);
      }, everyMs);
      timer.unref();
      windows.set(wake, timer);
    },
    stop() {
      stopped = true;
      for (const timer of windows.values()) clearTimeout(timer);
      windows.clear();
    },
  };
}

export interface WakeListener {
  /**
   * Whether a session listens now: while it does, a loop that waits for wakes may sleep long (a
   * wake lost meanwhile is made up for when a lost session comes back, see listenForWakes).
   * Always false on PGlite.
   */
  listening(): boolean;
  stop(): Promise<void>;
}

/**
 * Sends one wake now and waits for it: for a short-lived process (the admin CLI's retries of failed
 * jobs) that has no sender running. Never throws.
 */
export async function wakeNow(db: Database, wake: Wake): Promise<void> {
  const pool = (jobsOf(db) as unknown as { $client?: unknown }).$client;
  if (!(pool instanceof pg.Pool)) return;
  await pool.query('select pg_notify($1, $2)', [WAKE_CHANNEL, wake]).catch(() => undefined);
}

/**
 * Listens for wakes on a connection of its own (LISTEN needs one session for as long as it listens;
 * a PgBouncer in transaction mode cannot give one, so behind it wakes are lost and the idle waits
 * find the work). The session is checked every `checkMs` (a connection dropped without a word, by
 * a NAT or a proxy, would otherwise go unnoticed); a lost one is opened again after `retryMs`, and
 * `onWake` is then called for every kind: wakes sent while it was away were lost. A no-op on PGlite.
 */
export function listenForWakes(
  db: Database,
  onWake: (wake: Wake) => void,
  { retryMs = 1_000, checkMs = 30_000 } = {},
): WakeListener {
  const pool = dedicatedPool(db);
  if (!pool) return { listening: () => false, stop: async () => undefined };
  let stopped = false;
  let session: pg.PoolClient | undefined;
  /** The session whose LISTEN has been answered. */
  let heardBy: pg.PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;
  const reopen = () => {
    if (!stopped && !retry) retry = setTimeout(open, retryMs);
  };
  const check = setInterval(() => {
    const client = session;
    client?.query('select 1').catch(() => lost(client));
  }, checkMs);
  check.unref();
  const heard = (message: pg.Notification) => {
    if (message.channel === WAKE_CHANNEL && (WAKES as readonly string[]).includes(message.payload ?? ''))
      onWake(message.payload as Wake);
  };
  const lost = (client: pg.PoolClient) => {
    if (session !== client) return;
    session = undefined;
    client.release(true);
    reopen();
  };
  const open = (again = true) => {
    retry = undefined;
    if (stopped) return;
    pool
      .connect()
      .then(async (client) => {
        if (stopped) {
          client.release(true);
          return;
        }
        session = client;
        client.on('notification', heard);
        client.on('error', () => lost(client));
        client.on('end', () => lost(client));
        await client.query(`listen ${WAKE_CHANNEL}`);
        if (session === client) heardBy = client;
        if (again) for (const wake of WAKES) onWake(wake);
      })
      .catch(() => {
        if (session) lost(session);
        else reopen();
      });
  };
  open(false);
  return {
    listening: () => !stopped && session !== undefined && heardBy === session,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(check);
      const client = session;
      session = undefined;
      client?.release(true);
      await pool.end().catch(() => undefined);
    },
  };
}
