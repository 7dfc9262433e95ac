import { sql } from 'drizzle-orm';
import type { Redis } from 'ioredis';
import type { Database } from '../db/client.js';
import { queryRows } from '../db/client.js';
import { type DatabaseFault, databaseFaultOf, describeDatabaseError } from '../db/faults.js';
import { detachedFromTraces } from '../observability/tracing.js';

export type DatabaseState = 'up' | 'down' | 'read-only';
export type RedisState = 'up' | 'down' | 'not configured';

export interface DependencyLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * What this process knows about PostgreSQL and Redis. Each outage is logged as one warning when it
 * starts and one line when it ends, however many requests, jobs or reconnect attempts fail in
 * between. While the database is down a probe checks it twice a second, so recovery is noticed
 * without waiting for traffic; background loops wait on `databaseBack` instead of spinning.
 */
export class DependencyHealth {
  private database: DatabaseState = 'up';
  private databaseSince = Date.now();
  private probe: NodeJS.Timeout | undefined;
  private readonly waiting = new Set<() => void>();
  private readonly redisClients = new Map<Redis, boolean>();
  private redisDownSince: number | undefined;
  private closing = false;

  constructor(
    private readonly db: Database,
    private log: DependencyLog,
    private readonly probeEveryMs = 500,
  ) {}

  useLog(log: DependencyLog): void {
    this.log = log;
  }

  get databaseState(): DatabaseState {
    return this.database;
  }

  get redisState(): RedisState {
    if (this.redisClients.size === 0) return 'not configured';
    return this.redisDownSince === undefined ? 'up' : 'down';
  }

  /**
   * Tells of an error a query or connection met. Returns true when it was a database fault (now
   * recorded: the caller need not log it), false for any other error.
   */
  reportDatabaseError(error: unknown): boolean {
    const fault = databaseFaultOf(error);
    if (!fault) return false;
    // A statement or lock timeout, or a full pool, is load on a server that answers: no outage.
    if (fault !== 'timeout' && fault !== 'pool-exhausted') this.databaseDown(fault, error);
    return true;
  }

  /** Checks the database now (readiness asks this): reachable, and accepting writes. */
  async checkDatabase(): Promise<DatabaseState> {
    try {
      const [row] = await queryRows<{ read_only: string }>(
        this.db,
        sql`select current_setting('transaction_read_only') as read_only`,
      );
      if (row?.read_only === 'on') this.databaseDown('read-only', new Error('the server is read-only'));
      else this.databaseUp();
    } catch (error) {
      if (!this.reportDatabaseError(error)) throw error;
    }
    return this.database;
  }

  /** Resolves when the database is up again (at once if it is), or after `maxWaitMs`. */
  databaseBack(maxWaitMs: number): Promise<void> {
    if (this.database === 'up') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      this.waiting.add(done);
    });
  }

  /** Follows a Redis connection's state: one warning when any connection is lost, one line when all are back. */
  watchRedis(client: Redis, name: string): void {
    this.redisClients.set(client, client.status === 'ready');
    const lost = (error?: Error) => {
      if (this.closing) return;
      this.redisClients.set(client, false);
      this.redisDown(name, error);
    };
    client.on('error', (error: Error) => lost(error));
    client.on('close', () => lost());
    client.on('ready', () => {
      this.redisClients.set(client, true);
      if (this.redisDownSince !== undefined && [...this.redisClients.values()].every(Boolean)) {
        const downMs = Date.now() - this.redisDownSince;
        this.redisDownSince = undefined;
        this.log.info({ dependency: 'redis', downMs }, 'Redis is back: limits are shared and events are pushed again');
      }
    });
  }

  /** Shutdown: connections closing on purpose are not outages. */
  close(): void {
    this.closing = true;
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
    for (const done of [...this.waiting]) done();
  }

  private redisDown(name: string, error?: Error): void {
    if (this.redisDownSince !== undefined || this.closing) return;
    this.redisDownSince = Date.now();
    this.log.warn(
      { dependency: 'redis', connection: name, reason: error?.message ?? 'connection closed' },
      'Redis is unreachable: rate limits count per process and event feeds poll until it returns',
    );
  }

  private databaseDown(fault: Exclude<DatabaseFault, 'timeout' | 'pool-exhausted'>, error: unknown): void {
    if (this.closing) return;
    const state: DatabaseState = fault === 'read-only' ? 'read-only' : 'down';
    if (this.database === state) return;
    const wasUp = this.database === 'up';
    this.database = state;
    if (wasUp) this.databaseSince = Date.now();
    this.log.warn(
      { dependency: 'database', state, reason: describeDatabaseError(error) },
      state === 'read-only'
        ? 'The database is read-only: requests that write answer 503 until it accepts writes'
        : 'The database is unreachable: requests that need it answer 503 and background work waits',
    );
    // Started by whichever request met the fault first: its checks are in no trace.
    this.probe ??= setInterval(
      detachedFromTraces(() => void this.checkDatabase().catch(() => undefined)),
      this.probeEveryMs,
    );
    this.probe.unref();
  }

  private databaseUp(): void {
    if (this.database === 'up') return;
    const downMs = Date.now() - this.databaseSince;
    this.database = 'up';
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
    this.log.info({ dependency: 'database', downMs }, 'The database is back');
    for (const done of [...this.waiting]) done();
  }
}
