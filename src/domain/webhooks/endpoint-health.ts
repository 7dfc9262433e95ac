import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { recordEvent } from '../events/outbox.js';
import { laneOf } from '../jobs/lanes.js';
import { DELIVERY_JOB } from './webhook.js';

/** Consecutive failed attempts after which the circuit opens and deliveries wait instead of being sent. */
export const CIRCUIT_THRESHOLD = 5;
const FIRST_OPEN_MS = 30_000;
const LONGEST_OPEN_MS = 3_600_000;
/** Like Stripe and Svix: an endpoint whose every attempt failed for this long is disabled. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** How long the circuit stays open after the n-th consecutive failure: 30 s, doubling, at most 1 h. */
export function openFor(consecutiveFailures: number): number {
  if (consecutiveFailures < CIRCUIT_THRESHOLD) return 0;
  return Math.min(FIRST_OPEN_MS * 2 ** (consecutiveFailures - CIRCUIT_THRESHOLD), LONGEST_OPEN_MS);
}

interface HealthRow {
  consecutive_failures: number;
  failing_since: string | Date;
  user_id: string;
  environment: 'sandbox' | 'production';
  url: string;
}

/**
 * The endpoint's health after an attempt, in the attempt's transaction. A success closes the
 * circuit and clears the failure streak. A failure lengthens it (one atomic UPDATE, so concurrent
 * attempts count right), opens the circuit from the fifth on, and once every attempt has failed for
 * `disableAfterMs` disables the endpoint and tells its owner with a `webhook.endpoint.disabled`
 * event (sent to the owner's other endpoints and subscriptions; the dashboard shows the reason).
 * Returns until when the circuit is open, if it is.
 */
export async function recordEndpointHealth(
  tx: Executor,
  endpointId: string,
  succeeded: boolean,
  at: Date,
  disableAfterMs: number,
): Promise<Date | null> {
  if (succeeded) {
    await tx.execute(sql`update webhook_endpoints
      set consecutive_failures = 0, failing_since = null, circuit_open_until = null
      where id = ${endpointId} and (consecutive_failures > 0 or circuit_open_until is not null)`);
    return null;
  }
  const [row] = await queryRows<HealthRow>(
    tx,
    sql`update webhook_endpoints
      set consecutive_failures = consecutive_failures + 1,
        failing_since = coalesce(failing_since, ${at.toISOString()}::timestamptz)
      where id = ${endpointId}
      returning consecutive_failures, failing_since, user_id, environment, url`,
  );
  if (!row) return null;
  const failingSince = new Date(row.failing_since);
  if (at.getTime() - failingSince.getTime() >= disableAfterMs) {
    const days = Math.round(disableAfterMs / 86_400_000);
    const reason = `Disabled automatically: every delivery failed since ${failingSince.toISOString()} (${days === 0 ? 'less than a day' : `${days} days`}).`;
    const disabled = await queryRows(
      tx,
      sql`update webhook_endpoints set enabled = false, disabled_reason = ${reason}, circuit_open_until = null,
            updated_at = ${at.toISOString()}::timestamptz
          where id = ${endpointId} and enabled returning id`,
    );
    if (disabled.length > 0)
      await recordEvent(
        tx,
        {
          type: 'webhook.endpoint.disabled',
          userId: row.user_id,
          environment: row.environment,
          data: { endpointId, url: row.url, reason, failingSince: failingSince.toISOString() },
        },
        at,
      );
    return null;
  }
  const openMs = openFor(row.consecutive_failures);
  if (openMs === 0) return null;
  const until = new Date(at.getTime() + openMs);
  await tx.execute(
    sql`update webhook_endpoints set circuit_open_until = ${until.toISOString()}::timestamptz where id = ${endpointId}`,
  );
  return until;
}

/**
 * Moves the endpoint's waiting deliveries to when its circuit closes, so a dead endpoint's backlog
 * is not claimed and put back over and over. Runs in batches of short statements, outside the
 * attempt's transaction; rows a worker holds are skipped (that worker reschedules them itself).
 */
export async function deferWhileOpen(db: Executor, endpointId: string, until: Date, now: Date): Promise<number> {
  let moved = 0;
  for (;;) {
    const rows = await queryRows(
      db,
      sql`update jobs set run_at = ${until.toISOString()}::timestamptz
        where id in (
          select id from jobs
          where status = 'pending' and lane = ${laneOf(DELIVERY_JOB)} and concurrency_key = ${endpointId}
            and run_at < ${until.toISOString()}::timestamptz
            and (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
          limit 1000
          for update skip locked
        )
        returning 1`,
    );
    moved += rows.length;
    if (rows.length < 1000) return moved;
  }
}
