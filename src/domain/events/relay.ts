import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { queryRows } from '../../db/client.js';
import { toSafeNumber } from '../../db/columns.js';
import { observeStampedEvents, type StampedEvent } from '../../observability/money-metrics.js';

/** Any fixed number; only one relay across all instances stamps at a time. */
const RELAY_LOCK_KEY = 7_262_020_002;

/**
 * Stamps `seq` on events in commit order, and one transaction's events in the order it wrote them
 * (`ordinal`). An event is stamped only when its inserting transaction
 * is older than every transaction still open (txid < the snapshot's xmin): a transaction that is
 * still running can only commit rows with a txid at or above xmin, which this rule stamps later
 * and so higher. A reader resuming "after seq N" therefore never skips an event that committed late.
 *
 * The cost of this rule: while any transaction of the cluster stays open, events committed after
 * it began wait for it. Domain transactions are short, and providers are never called inside one.
 *
 * Returns how many events were stamped. By default it gives up at once (returning 0) when another
 * relay holds the lock; `wait` blocks for the lock instead, for callers that need the stamp now.
 */
export async function stampCommittedEvents(
  db: Database,
  options: { batchSize?: number; wait?: boolean } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  const stamped = await db.transaction(async (tx): Promise<Array<StampedEvent & { lag_ms: unknown }>> => {
    if (options.wait) {
      await tx.execute(sql`select pg_advisory_xact_lock(${RELAY_LOCK_KEY})`);
    } else {
      const [lock] = await queryRows<{ locked: boolean }>(
        tx,
        sql`select pg_try_advisory_xact_lock(${RELAY_LOCK_KEY}) as locked`,
      );
      if (!lock?.locked) return [];
    }
    const rows = await queryRows<StampedEvent & { lag_ms: unknown }>(
      tx,
      sql`
        with horizon as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin),
        base as (select coalesce(max(seq), 0) as top from events),
        ready as (
          select id, row_number() over (order by txid, ordinal) as rn
          from events, horizon
          where seq is null and txid < horizon.xmin
          order by txid, ordinal
          limit ${batchSize}
        )
        update events e set seq = base.top + ready.rn
        from ready, base
        where e.id = ready.id
        returning e.type, e.data->>'type' as kind, e.data->>'status' as status,
          e.data->>'currency' as currency, e.data->>'amount' as amount,
          extract(epoch from clock_timestamp() - e.created_at) * 1000 as lag_ms`,
    );
    return rows;
  });
  // Counted once committed: each event is stamped once across all instances.
  observeStampedEvents(stamped);
  if (stampListeners.size > 0 && stamped.length > 0) {
    const lags = stamped.map((row) => Number(row.lag_ms));
    for (const listener of stampListeners) listener(lags);
  }
  return stamped.length;
}

const stampListeners = new Set<(lagsMs: number[]) => void>();

/**
 * Hears, for every batch this process stamps, each event's lag in milliseconds from its
 * `created_at` (the operation's clock reading, just before its commit) to its stamp: an upper bound
 * of commit → `seq` lag, which readers wait out. For benchmarks and metrics; returns the unsubscribe.
 */
export function onStamped(listener: (lagsMs: number[]) => void): () => void {
  stampListeners.add(listener);
  return () => stampListeners.delete(listener);
}

/** Highest stamped position, for readers that want to start "from now". */
export async function latestEventSeq(db: Database): Promise<number> {
  const [row] = await queryRows<{ top: unknown }>(db, sql`select coalesce(max(seq), 0) as top from events`);
  return toSafeNumber(row?.top ?? 0);
}
