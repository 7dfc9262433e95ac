import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { stopListening } from './http/close-listener.js';
import type { Stoppable } from './bootstrap/after-first-answer.js';

export interface ShutdownParts {
  app: FastifyInstance;
  /** Background work (src/workers.ts), started or not yet. */
  workers: Stoppable | undefined;
  database: DatabaseHandle;
  config: Pick<Config, 'SHUTDOWN_GRACE_MS' | 'SHUTDOWN_READINESS_DELAY_MS'>;
  /** Last step after the pools close (flushing spans, say). */
  onClosed?: () => Promise<void>;
}

/**
 * SIGTERM / SIGINT, in this order: readiness answers 503 for SHUTDOWN_READINESS_DELAY_MS while
 * requests are still served, so a load balancer sees it and stops sending; then the listener
 * closes (new connections are refused; requests on connections already open are answered, with
 * `Connection: close`), WebSocket clients get 1001, in-flight requests finish, workers finish
 * their jobs or give the leases back, and the pools close. Exit 0; past SHUTDOWN_GRACE_MS from the signal, exit 1. A second signal while
 * shutting down is ignored (the grace timer still bounds the wait).
 */
export function installGracefulShutdown({ app, workers, database, config, onClosed }: ShutdownParts): void {
  let started = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (started) {
      app.log.warn({ signal }, 'already shutting down');
      return;
    }
    started = true;
    const began = Date.now();
    const graceMs = config.SHUTDOWN_GRACE_MS;
    const readinessDelayMs = Math.min(config.SHUTDOWN_READINESS_DELAY_MS ?? 0, graceMs);
    app.log.info({ signal, readinessDelayMs, graceMs }, 'shutting down: readiness is now 503');
    app.draining = true;
    const force = setTimeout(() => {
      app.log.error({ graceMs }, 'shutdown did not finish within the grace: exiting');
      process.exit(1);
    }, graceMs);
    force.unref();
    let code = 0;
    try {
      if (readinessDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, readinessDelayMs));
      app.log.info('closing the listener; finishing requests and jobs');
      const left = () => Math.max(0, graceMs - (Date.now() - began));
      // Jobs may run until shortly before the grace ends, then their leases are given back.
      await Promise.all([
        stopListening(
          app.server,
          () => app.close(),
          () => {
            app.listenerClosed = true;
          },
        ),
        workers?.stop(Math.max(0, left() - 1_000)),
      ]);
      await database.close();
      await onClosed?.();
    } catch (error) {
      app.log.error({ err: error }, 'shutdown step failed');
      code = 1;
    }
    clearTimeout(force);
    app.log.info({ durationMs: Date.now() - began, code }, 'shut down');
    process.exit(code);
  };
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
  shutDownWhenOrphaned(() => void shutdown('SIGTERM'));
}

/**
 * Under an npm script, npm passes SIGTERM to its child; when that child is a shell running this
 * process (a start script without `exec`), the shell dies and the signal never arrives here, and
 * npm exits leaving the server running. So a process started by npm whose parent goes away shuts
 * down as if signalled. Only under npm: a server started from a shell with `nohup … &` keeps running.
 */
function shutDownWhenOrphaned(shutdown: () => void): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    shutdown();
  }, 250);
  watch.unref();
}
