import { detachedFromTraces, outsideTraces } from '../observability/tracing.js';
import type { DatabaseState, DependencyHealth } from './dependency-health.js';

/**
 * How often the database is checked for readiness: every 2 s, not every second, halves what an idle
 * instance spends on it (about 1 ms of CPU a second at 1 Hz); orchestrators probe every 5-10 s.
 */
export const READINESS_CHECK_EVERY_MS = 2_000;
/** A check still unfinished after this long (the request pool full, the server hung) makes readiness `unknown`. */
export const READINESS_STALE_AFTER_MS = 10_000;

/** The database as /readyz reports it: `unknown` while no check has finished for READINESS_STALE_AFTER_MS. */
export type DatabaseReadiness = DatabaseState | 'unknown';

/**
 * Readiness kept in memory, so /readyz answers at once however busy the process is: it used to
 * check the database itself, and so queued for a connection behind the very requests that made the
 * instance busy (1.7 to 5 s with 200 slow clients). A background check runs every
 * READINESS_CHECK_EVERY_MS, one at a time; requests that meet a database fault also move the state
 * (DependencyHealth.reportDatabaseError). The timer is unref'd (it never keeps a process alive) and
 * every check runs in no trace: started from whatever context the app became ready in, a timer
 * would otherwise carry that context, and a request's trace, into every check after it.
 */
export class ReadinessWatch {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private lastFinishedAt = Date.now();
  /** The last check failed with something other than a database fault (DependencyHealth records those). */
  private lastFailed = false;

  constructor(
    private readonly health: DependencyHealth,
    private readonly everyMs = READINESS_CHECK_EVERY_MS,
    private readonly staleAfterMs = READINESS_STALE_AFTER_MS,
  ) {}

  /** Checks now, then every `everyMs` after each check finishes. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.lastFinishedAt = Date.now();
    outsideTraces(this.tick);
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  get database(): DatabaseReadiness {
    const state = this.health.databaseState;
    if (state !== 'up') return state;
    if (this.lastFailed) return 'down';
    if (this.running && Date.now() - this.lastFinishedAt > this.staleAfterMs) return 'unknown';
    return 'up';
  }

  private readonly tick = detachedFromTraces(() => {
    this.timer = undefined;
    if (!this.running) return;
    void this.health
      .checkDatabase()
      .then(
        () => false,
        () => true,
      )
      .then((failed) => {
        this.lastFailed = failed;
        this.lastFinishedAt = Date.now();
        if (!this.running) return;
        this.timer = setTimeout(this.tick, this.everyMs);
        this.timer.unref();
      });
  });
}
