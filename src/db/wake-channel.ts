import pg from 'pg';
import type { Database } from './client.js';
import { dedicatedPool } from './dedicated-pool.js';

/** The PostgreSQL channel on which processes tell each other of new events and jobs. */
export const WAKE_CHANNEL = 'gateway_wake';

/** What a wake announces: events to stamp (the relay), or jobs written (the job runner). */
export type Wake = 'events' | 'jobs';
const WAKES: readonly Wake[] = ['events', 'jobs'];

export interface WakeSender {
  send(wake: Wake): void;
  stop(): void;
}

/**
 * Sends wakes from a process that writes events or jobs but runs no relay or job runner (an
 * instance started with WORKERS=false, which the relay and runner of other instances would
 * otherwise find only at their longest idle wait): `NOTIFY gateway_wake` through the database's own
 * pool, never inside the writer's transaction (a NOTIFY there would queue every commit of the
 * server behind the notification queue's lock). At most one per wake kind every `everyMs`: the
 * first at once, any more in that window as one at its end. A wake that fails is dropped (the idle
 * wait still finds the work). A no-op on PGlite, which no other process shares.
 */
export function wakeSender(db: Database, everyMs = 20): WakeSender {
  const pool = (db as unknown as { $client?: unknown }).$client;
  if (!(pool instanceof pg.Pool)) return { send: () => undefined, stop: () => undefined };
  const windows = new Map<Wake, { timer: NodeJS.Timeout; again: boolean }>();
  let stopped = false;
  const notify = (wake: Wake) => {
    if (stopped) return;
    void pool.query('select pg_notify($1, $2)', [WAKE_CHANNEL, wake]).catch(() => undefined);
    const timer = setTimeout(() => {
      const window = windows.get(wake);
      windows.delete(wake);
      if (window?.again) notify(wake);
    }, everyMs);
    timer.unref();
    windows.set(wake, { timer, again: false });
  };
  return {
    send(wake) {
      const window = windows.get(wake);
      if (window) window.again = true;
      else notify(wake);
    },
    stop() {
      stopped = true;
      for (const { timer } of windows.values()) clearTimeout(timer);
      windows.clear();
    },
  };
}

export interface WakeListener {
  stop(): Promise<void>;
}

/**
 * Listens for wakes on a connection of its own (LISTEN needs one session for as long as it listens).
 * A lost connection is opened again after `retryMs`, and `onWake` is then called for every kind:
 * wakes sent while it was away were lost. A no-op on PGlite.
 */
export function listenForWakes(db: Database, onWake: (wake: Wake) => void, retryMs = 1_000): WakeListener {
  const pool = dedicatedPool(db);
  if (!pool) return { stop: async () => undefined };
  let stopped = false;
  let session: pg.PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;
  const heard = (message: pg.Notification) => {
    if (message.channel === WAKE_CHANNEL && (WAKES as readonly string[]).includes(message.payload ?? ''))
      onWake(message.payload as Wake);
  };
  const lost = (client: pg.PoolClient) => {
    if (session !== client) return;
    session = undefined;
    client.release(true);
    if (!stopped) retry = setTimeout(open, retryMs);
  };
  const open = (again = true) => {
    retry = undefined;
    if (stopped) return;
    pool
      .connect()
      .then(async (client) => {
        session = client;
        client.on('notification', heard);
        client.on('error', () => lost(client));
        client.on('end', () => lost(client));
        await client.query(`listen ${WAKE_CHANNEL}`);
        if (again) for (const wake of WAKES) onWake(wake);
      })
      .catch(() => {
        if (session) lost(session);
        else if (!stopped) retry = setTimeout(open, retryMs);
      });
  };
  open(false);
  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      const client = session;
      session = undefined;
      client?.release(true);
      await pool.end().catch(() => undefined);
    },
  };
}
