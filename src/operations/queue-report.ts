import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../db/client.js';
import { toSafeNumber } from '../db/columns.js';
import { tellJobWrite } from '../db/plain-sql.js';
import { enqueueJob } from '../domain/jobs/job-runner.js';
import { DELIVERY_JOB } from '../domain/webhooks/webhook.js';

/**
 * What an operator needs about background work: queue depth per kind, the jobs and webhook
 * deliveries that failed for good with their last error, and putting them back in line or
 * setting them aside. Read by the admin CLI (`queue`, `failed-jobs`, `retry-job`, …).
 */
export interface QueueDepth {
  kind: string;
  due: number;
  scheduled: number;
  running: number;
  failed: number;
  oldestDueSeconds: number;
}

export async function queueDepth(db: Executor, now: Date): Promise<QueueDepth[]> {
  const at = now.toISOString();
  const rows = await queryRows<{
    kind: string;
    due: unknown;
    scheduled: unknown;
    running: unknown;
    failed: unknown;
    oldest_due: string | Date | null;
  }>(
    db,
    sql`/* operatorQueueDepth */ select kind,
      count(*) filter (where status = 'pending' and run_at <= ${at}::timestamptz
        and (locked_until is null or locked_until < ${at}::timestamptz)) as due,
      count(*) filter (where status = 'pending' and run_at > ${at}::timestamptz
        and (locked_until is null or locked_until < ${at}::timestamptz)) as scheduled,
      count(*) filter (where status = 'pending' and locked_until >= ${at}::timestamptz) as running,
      count(*) filter (where status = 'failed') as failed,
      min(run_at) filter (where status = 'pending' and run_at <= ${at}::timestamptz
        and (locked_until is null or locked_until < ${at}::timestamptz)) as oldest_due
    from jobs where status in ('pending', 'failed') group by kind order by kind`,
  );
  return rows.map((r) => ({
    kind: r.kind,
    due: toSafeNumber(r.due),
    scheduled: toSafeNumber(r.scheduled),
    running: toSafeNumber(r.running),
    failed: toSafeNumber(r.failed),
    oldestDueSeconds: r.oldest_due
      ? Math.max(0, Math.round((now.getTime() - new Date(r.oldest_due).getTime()) / 1000))
      : 0,
  }));
}

export interface FailedJob {
  id: string;
  kind: string;
  attempts: number;
  lastError: string | null;
  failedAt: string;
}

export async function failedJobs(db: Executor, options: { kind?: string; limit: number }): Promise<FailedJob[]> {
  const rows = await queryRows<{
    id: string;
    kind: string;
    attempts: number;
    last_error: string | null;
    updated_at: string | Date;
  }>(
    db,
    sql`/* operatorFailedJobs */ select id, kind, attempts, last_error, updated_at from jobs
      where status = 'failed' ${options.kind ? sql`and kind = ${options.kind}` : sql``}
      order by updated_at desc limit ${options.limit}`,
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    attempts: Number(r.attempts),
    lastError: r.last_error,
    failedAt: new Date(r.updated_at).toISOString(),
  }));
}

/** Puts failed jobs back in line, due now, with their attempt count reset. Returns how many. */
export async function retryFailedJobs(
  db: Executor,
  select: { id?: string; kind?: string },
  now: Date,
): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`/* operatorRetryJobs */ update jobs set status = 'pending', run_at = ${now.toISOString()}::timestamptz,
        attempts = 0, locked_by = null, locked_until = null, updated_at = ${now.toISOString()}::timestamptz
      where status = 'failed' and ${whereJobs(select)} returning id`,
  );
  // Due now: this process's lanes look at once; the admin CLI also wakes the running instances.
  if (rows.length > 0) tellJobWrite({ runAt: now });
  return rows.length;
}

/**
 * Sets failed (or still pending) jobs aside for good: they are marked done, their last error
 * kept with a note, so nothing runs them again. Returns how many.
 */
export async function discardJobs(db: Executor, select: { id?: string; kind?: string }, now: Date): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`/* operatorDiscardJobs */ update jobs set status = 'done',
        last_error = 'discarded by an operator' || coalesce(': ' || last_error, ''),
        locked_by = null, locked_until = null, updated_at = ${now.toISOString()}::timestamptz
      where status in ('failed', 'pending') and (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
        and ${whereJobs(select)} returning id`,
  );
  return rows.length;
}

function whereJobs(select: { id?: string; kind?: string }) {
  if (select.id) return sql`id = ${select.id}::uuid`;
  if (select.kind) return sql`kind = ${select.kind}`;
  throw new Error('Say which jobs: an id or a kind.');
}

export interface FailedDelivery {
  id: string;
  eventType: string;
  endpointId: string;
  endpointHost: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  failedAt: string;
}

export async function failedDeliveries(db: Executor, limit: number): Promise<FailedDelivery[]> {
  const rows = await queryRows<{
    id: string;
    event_type: string;
    endpoint_id: string;
    url: string;
    attempt_count: number;
    status_code: number | null;
    error: string | null;
    updated_at: string | Date;
  }>(
    db,
    sql`/* operatorFailedDeliveries */ select d.id, e.type as event_type, d.endpoint_id, w.url, d.attempt_count,
        last.status_code, last.error, d.updated_at
      from webhook_deliveries d
      join events e on e.id = d.event_id
      join webhook_endpoints w on w.id = d.endpoint_id
      left join lateral (
        select status_code, error from webhook_attempts a where a.delivery_id = d.id
        order by attempt_number desc limit 1
      ) last on true
      where d.status = 'failed'
      order by d.updated_at desc limit ${limit}`,
  );
  return rows.map((r) => ({
    id: r.id,
    eventType: r.event_type,
    endpointId: r.endpoint_id,
    endpointHost: hostOf(r.url),
    attempts: Number(r.attempt_count),
    lastStatusCode: r.status_code === null ? null : Number(r.status_code),
    lastError: r.error,
    failedAt: new Date(r.updated_at).toISOString(),
  }));
}

/**
 * Sends a failed delivery again: it becomes pending and gets one scheduled attempt now; if that
 * fails too, it is failed again (its retry schedule is already spent). Returns false when there
 * is no failed delivery with that id.
 */
export async function retryDelivery(db: Executor, id: string, now: Date): Promise<boolean> {
  const rows = await queryRows<{ id: string; endpoint_id: string; tenant: string }>(
    db,
    sql`/* operatorRetryDelivery */ update webhook_deliveries d set status = 'pending',
        next_attempt_at = ${now.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
      from webhook_endpoints e
      where d.id = ${id}::uuid and d.status = 'failed' and e.id = d.endpoint_id
      returning d.id, d.endpoint_id, e.user_id as tenant`,
  );
  const [row] = rows;
  if (!row) return false;
  // The endpoint's owner is the tenant (fair claims) and the endpoint the concurrency key, as for every delivery.
  await enqueueJob(db, {
    kind: DELIVERY_JOB,
    payload: { deliveryId: id },
    runAt: now,
    tenant: row.tenant,
    concurrencyKey: row.endpoint_id,
  });
  return true;
}

/** Stops a pending delivery's retries: it is failed now, and its queued attempts do nothing. */
export async function discardDelivery(db: Executor, id: string, now: Date): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`/* operatorDiscardDelivery */ update webhook_deliveries set status = 'failed', next_attempt_at = null,
        updated_at = ${now.toISOString()}::timestamptz
      where id = ${id}::uuid and status = 'pending' returning id`,
  );
  return rows.length > 0;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}
