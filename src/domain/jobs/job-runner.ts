import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { queryRows } from '../../db/client.js';
import { jobs } from '../../db/schema.js';
import type { Clock } from '../clock.js';
import { startJobRun, withTraceContext } from '../../observability/job-observation.js';

export interface Job {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
  runAt: Date;
}

/** What a handler decides about a job it ran. Throwing counts as `retry` with backoff. */
export type JobOutcome =
  | { status: 'done' }
  | { status: 'retry'; at: Date; error?: string }
  | { status: 'failed'; error: string };

export interface JobHandler {
  kind: string;
  run(job: Job): Promise<JobOutcome>;
}

/** Enqueue inside the transaction that causes the work, so the two commit together. */
export async function enqueueJob(
  tx: Executor,
  job: { kind: string; payload?: Record<string, unknown>; runAt: Date },
): Promise<string> {
  const [row] = await tx
    .insert(jobs)
    .values({ kind: job.kind, payload: withTraceContext(job.payload ?? {}), runAt: job.runAt })
    .returning({ id: jobs.id });
  return row!.id;
}

export interface JobRunnerOptions {
  workerId?: string;
  /** How long a claim lasts; a worker that dies loses its jobs to others after this. */
  leaseMs?: number;
  batchSize?: number;
  pollMs?: number;
  maxAttempts?: number;
  onError?: (error: unknown, job?: Job) => void;
  /** Awaited after a failed round (e.g. until the database is back), so a failing store is not polled flat out. */
  waitAfterError?: (error: unknown) => Promise<void>;
}

/**
 * Runs due jobs from the `jobs` table. A claim is one statement (`FOR UPDATE SKIP LOCKED` inside
 * an UPDATE … RETURNING), so concurrent workers never take the same job; the work itself runs
 * outside any transaction, and the result is recorded only if this worker still holds the lease.
 */
export class JobRunner {
  readonly workerId: string;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly maxAttempts: number;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly claimed = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    handlers: JobHandler[],
    private readonly options: JobRunnerOptions = {},
  ) {
    this.workerId = options.workerId ?? `worker-${randomUUID()}`;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.batchSize = options.batchSize ?? 20;
    this.pollMs = options.pollMs ?? 500;
    this.maxAttempts = options.maxAttempts ?? 10;
    for (const handler of handlers) this.register(handler);
  }

  register(handler: JobHandler): void {
    this.handlers.set(handler.kind, handler);
  }

  start(): void {
    const tick = async () => {
      if (this.stopping) return;
      let ran = 0;
      try {
        ran = await this.runDueJobs();
      } catch (error) {
        this.options.onError?.(error);
        await this.options.waitAfterError?.(error);
      }
      // A full queue is drained back to back; an empty one is polled.
      if (!this.stopping) this.timer = setTimeout(tick, ran > 0 ? 0 : this.pollMs);
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Claims the due jobs and runs them to completion. Returns how many were run. */
  async runDueJobs(): Promise<number> {
    const claimed = await this.claimDueJobs();
    await Promise.all(claimed.map((job) => this.track(this.execute(job))));
    return claimed.length;
  }

  /** Stops claiming, waits for running jobs up to `graceMs`, then gives unfinished leases back. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const drained = Promise.all([...this.inFlight]);
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, graceMs))]);
    if (this.claimed.size > 0) {
      await this.db
        .update(jobs)
        .set({ lockedBy: null, lockedUntil: null })
        .where(and(inArray(jobs.id, [...this.claimed]), eq(jobs.lockedBy, this.workerId)));
    }
  }

  private async claimDueJobs(): Promise<Job[]> {
    const kinds = [...this.handlers.keys()];
    if (kinds.length === 0) return [];
    const now = this.clock.now();
    const leaseUntil = new Date(now.getTime() + this.leaseMs);
    const rows = await queryRows<{
      id: string;
      kind: string;
      payload: unknown;
      attempts: number;
      run_at: string | Date;
    }>(
      this.db,
      sql`
        update jobs set locked_by = ${this.workerId}, locked_until = ${leaseUntil.toISOString()}::timestamptz,
          attempts = attempts + 1, updated_at = ${now.toISOString()}::timestamptz
        where id in (
          select id from jobs
          where status = 'pending' and kind in (${sql.join(
            kinds.map((k) => sql`${k}`),
            sql`, `,
          )})
            and run_at <= ${now.toISOString()}::timestamptz
            and (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
          order by run_at
          limit ${this.batchSize}
          for update skip locked
        )
        returning id, kind, payload, attempts, run_at`,
    );
    return rows.map((r) => {
      this.claimed.add(r.id);
      return {
        id: r.id,
        kind: r.kind,
        payload: (r.payload ?? {}) as Record<string, unknown>,
        attempts: r.attempts,
        runAt: new Date(r.run_at),
      };
    });
  }

  private async execute(job: Job): Promise<void> {
    const handler = this.handlers.get(job.kind);
    const observed = startJobRun(job);
    let outcome: JobOutcome;
    try {
      outcome = handler
        ? await observed.within(() => handler.run(job))
        : { status: 'failed', error: `No handler for ${job.kind}` };
    } catch (error) {
      this.options.onError?.(error, job);
      const message = error instanceof Error ? error.message : String(error);
      const backoffMs = Math.min(2 ** job.attempts * 1000, 3_600_000);
      outcome =
        job.attempts >= this.maxAttempts
          ? { status: 'failed', error: message }
          : { status: 'retry', at: new Date(this.clock.now().getTime() + backoffMs), error: message };
    }
    observed.finish(outcome.status);
    await this.record(job, outcome);
    this.claimed.delete(job.id);
  }

  private async record(job: Job, outcome: JobOutcome): Promise<void> {
    const mine = and(eq(jobs.id, job.id), eq(jobs.lockedBy, this.workerId));
    const common = { lockedBy: null, lockedUntil: null, updatedAt: this.clock.now() };
    if (outcome.status === 'retry') {
      await this.db
        .update(jobs)
        .set({ ...common, runAt: outcome.at, lastError: outcome.error ?? null })
        .where(mine);
    } else {
      await this.db
        .update(jobs)
        .set({ ...common, status: outcome.status, lastError: outcome.status === 'failed' ? outcome.error : null })
        .where(mine);
    }
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }
}
