import { sql } from 'drizzle-orm';
import { fanOutBacklog, unstampedBacklog } from '../domain/events/relay.js';
import type pg from 'pg';
import { type Database, queryRows } from '../db/client.js';
import { toSafeNumber } from '../db/columns.js';
import { exhaustedCheckouts } from '../db/pool-exhaustion.js';
import type { Clock } from '../domain/clock.js';
import { ledger } from '../domain/ledger/ledger.js';
import type { Reconciliation } from '../domain/reconciliation/reconciliation-service.js';
import type { UnknownOutcomes } from '../domain/facade/operator-queue.js';
import { metrics } from './metrics.js';

export interface GaugeSources {
  db: Database;
  driver: 'pglite' | 'postgres';
  clock: Clock;
  /** PostgreSQL's pools by name (request, read, jobs as they exist, relay), read at each scrape; none on PGlite. */
  pools?: (() => Array<{ name: string; pool: pg.Pool }>) | undefined;
  /** true/false when Redis is configured, undefined when it is not. */
  redisConnected: () => boolean | undefined;
  /** Open and aged breaks, clearing past its window. */
  reconciliation?: Reconciliation | undefined;
  /** Facade mode: the operator queue of mutations whose outcome is unknown. */
  unknownOutcomes?: UnknownOutcomes | undefined;
}

const QUEUE_EVERY_MS = 5_000;
const LEDGER_EVERY_MS = 60_000;

/**
 * Gauges read from the database when /metrics is scraped, at most every 5 s (the ledger sum every
 * minute): several scrapers, or a scraper and a dashboard, never multiply the queries. Each
 * query uses an index (jobs_due_idx, events_unstamped_idx) except the failed-job count and the
 * ledger sum, which are why those are cached longer.
 */
export function createGaugeCollector(sources: GaugeSources): { refresh(force?: boolean): Promise<void> } {
  let queueAt = 0;
  let ledgerAt = 0;
  const run = async (name: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch {
      metrics.scrapeErrors.inc({ collector: name });
    }
  };
  return {
    async refresh(force = false) {
      const now = sources.clock.now();
      const redis = sources.redisConnected();
      if (redis !== undefined) metrics.redisUp.set(redis ? 1 : 0);
      if (sources.pools) readPools(sources.pools());
      if (force || now.getTime() - queueAt >= QUEUE_EVERY_MS) {
        queueAt = now.getTime();
        await run('jobs', () => readJobs(sources.db, now));
        await run('webhooks', () => readDeliveries(sources.db));
        await run('events', () => readStamping(sources.db, sources.driver));
        const { unknownOutcomes } = sources;
        if (unknownOutcomes) await run('facade-keys', () => readUnknownOutcomes(unknownOutcomes));
      }
      if (force || now.getTime() - ledgerAt >= LEDGER_EVERY_MS) {
        ledgerAt = now.getTime();
        await run('ledger', () => readLedger(sources.db, now));
        const { reconciliation } = sources;
        if (reconciliation) await run('reconciliation', () => readReconciliation(reconciliation));
      }
    },
  };
}

/**
 * Each pool's connections under its own `pool` label: summed, a full request pool looked like
 * spare room while the read or jobs pool sat idle. Reset first, so a pool that went (a stopped
 * relay) leaves no series behind.
 */
function readPools(pools: Array<{ name: string; pool: pg.Pool }>): void {
  for (const gauge of [metrics.dbPoolInUse, metrics.dbPoolIdle, metrics.dbPoolWaiting]) gauge.reset();
  metrics.dbPoolExhausted.reset();
  for (const { name, pool } of pools) {
    metrics.dbPoolInUse.set({ pool: name }, pool.totalCount - pool.idleCount);
    metrics.dbPoolIdle.set({ pool: name }, pool.idleCount);
    metrics.dbPoolWaiting.set({ pool: name }, pool.waitingCount);
    // The pool's own count since it opened (pool-exhaustion.ts): a counter, set to it at each scrape.
    metrics.dbPoolExhausted.inc({ pool: name }, exhaustedCheckouts(pool));
  }
}

async function readJobs(db: Database, now: Date): Promise<void> {
  const at = now.toISOString();
  const pending = await queryRows<{
    kind: string;
    queued: unknown;
    due: unknown;
    running: unknown;
    oldest_due: string | Date | null;
  }>(
    db,
    sql`/* metricsPendingJobs */ select kind,
      count(*) filter (where locked_until is null or locked_until < ${at}::timestamptz) as queued,
      count(*) filter (where run_at <= ${at}::timestamptz and (locked_until is null or locked_until < ${at}::timestamptz)) as due,
      count(*) filter (where locked_until >= ${at}::timestamptz) as running,
      min(run_at) filter (where run_at <= ${at}::timestamptz and (locked_until is null or locked_until < ${at}::timestamptz)) as oldest_due
    from jobs where status = 'pending' group by kind`,
  );
  const failed = await queryRows<{ kind: string; n: unknown }>(
    db,
    sql`/* metricsFailedJobs */ select kind, count(*) as n from jobs where status = 'failed' group by kind`,
  );
  for (const gauge of [
    metrics.jobsQueued,
    metrics.jobsDue,
    metrics.jobsRunning,
    metrics.jobsOldestDueAge,
    metrics.jobsFailed,
  ])
    gauge.reset();
  for (const row of pending) {
    metrics.jobsQueued.set({ kind: row.kind }, toSafeNumber(row.queued));
    metrics.jobsDue.set({ kind: row.kind }, toSafeNumber(row.due));
    metrics.jobsRunning.set({ kind: row.kind }, toSafeNumber(row.running));
    const oldest = row.oldest_due ? new Date(row.oldest_due).getTime() : now.getTime();
    metrics.jobsOldestDueAge.set({ kind: row.kind }, Math.max(0, (now.getTime() - oldest) / 1000));
  }
  for (const row of failed) metrics.jobsFailed.set({ kind: row.kind }, toSafeNumber(row.n));
}

async function readDeliveries(db: Database): Promise<void> {
  const rows = await queryRows<{ status: string; n: unknown }>(
    db,
    sql`/* metricsDeliveries */ select status, count(*) as n from webhook_deliveries
      where status in ('pending', 'failed') group by status`,
  );
  const count = (status: string) => toSafeNumber(rows.find((r) => r.status === status)?.n ?? 0);
  metrics.webhookDeliveriesPending.set(count('pending'));
  metrics.webhookDeliveriesFailed.set(count('failed'));
}

async function readStamping(db: Database, driver: GaugeSources['driver']): Promise<void> {
  const backlog = await unstampedBacklog(db);
  metrics.eventsUnstamped.set(backlog.count);
  metrics.eventsStampingLag.set(backlog.oldestSeconds);
  metrics.eventsNotFannedOut.set(await fanOutBacklog(db));
  if (driver !== 'postgres') return;
  const [horizon] = await queryRows<{ age: unknown }>(
    db,
    sql`/* metricsHorizon */ select coalesce(extract(epoch from now() - min(xact_start)), 0)::float8 as age
      from pg_stat_activity where backend_xmin is not null and pid <> pg_backend_pid()`,
  );
  metrics.eventsHorizonAge.set(Number(horizon?.age ?? 0));
}

async function readLedger(db: Database, now: Date): Promise<void> {
  for (const environment of ['sandbox', 'production'] as const) {
    const total = await ledger.totalOf(db, environment);
    metrics.ledgerInvariant.set({ environment }, total === 0n ? 1 : 0);
  }
  metrics.ledgerInvariantCheckedAt.set(now.getTime() / 1000);
}

/** Reconciliation gauges, from the stored breaks and runs (the collector's clock judges "aged" and "overdue"). */
export async function readReconciliation(reconciliation: Reconciliation): Promise<void> {
  const open = await reconciliation.openBreakCounts();
  const notices = await reconciliation.notices();
  const clearing = await reconciliation.latestClearing();
  metrics.reconBreaksOpen.reset();
  for (const row of open)
    metrics.reconBreaksOpen.set({ environment: row.environment, provider: row.provider, kind: row.kind }, row.n);
  metrics.reconAgedBreaks.set(notices.agedBreaks);
  metrics.reconProviderUnread.reset();
  for (const u of notices.unreadProviders)
    metrics.reconProviderUnread.set({ environment: u.environment, provider: u.provider }, 1);
  metrics.reconClearing.reset();
  metrics.reconClearingOverdue.reset();
  for (const c of clearing) {
    const labels = { environment: c.environment, provider: c.provider };
    metrics.reconClearing.set(labels, Number(c.clearingMinor));
    metrics.reconClearingOverdue.set(labels, c.due && c.clearingMinor !== '0' ? 1 : 0);
  }
}

/** The facade's operator queue: how many wait, and how long the oldest has (the alert: it only grows). */
async function readUnknownOutcomes(queue: UnknownOutcomes): Promise<void> {
  const { count, oldestSeconds } = await queue.oldest();
  metrics.facadeUnknownQueued.set(count);
  metrics.facadeUnknownOldestAge.set(oldestSeconds);
}
