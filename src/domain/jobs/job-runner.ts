import { randomUUID } from 'node:crypto';
import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { queryRows } from '../../db/client.js';
import { jobs } from '../../db/schema.js';
import { type Clock, TestClockTime, wallTimeOf } from '../clock.js';
import { startJobRun, withTraceContext } from '../../observability/job-observation.js';
import { outsideTraces } from '../../observability/tracing.js';
import { claimLaneJobsAndNextDue, extendLeaseOnceFree, extendLeases } from './job-claims.js';
import { LeaseLostError } from '../../db/job-fence.js';
import { causesOf } from '../../db/sql-state.js';
import { onDatabase } from '../../db/database-binding.js';
import { fencedOf, jobsOf } from '../../db/pool-routing.js';
import { type JobWrite, onJobWrites, runIn, statement, tellJobWrite } from '../../db/plain-sql.js';
import { DEFAULT_LANES, type Lane, type LaneLimits, type LaneSettings, laneOf } from './lanes.js';

export interface Job {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
  runAt: Date;
  tenant: string;
  /** The sandbox test clock its due time was read from, if any (see NewJob.clock). */
  testClockId?: string | null;
  /** This claim's fence: see `assertLease`. */
  leaseToken: string;
  /** Aborted when the lease is lost (another worker took the job over): stop before any further effect. */
  signal: AbortSignal;
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

export interface NewJob {
  kind: string;
  payload?: Record<string, unknown>;
  runAt: Date;
  /** Whose work this is (the user id), or '' for the system's own: claims take turns across tenants. */
  tenant: string;
  /** Jobs sharing a key (a webhook endpoint) are limited in how many run at once. */
  concurrencyKey?: string;
  /**
   * The clock `runAt` was read from, when it is an account's (ClockFor). A sandbox test clock's job
   * is stored in wall time and marked with the clock, so the clock's advance finds it
   * (sandbox/test-clock-service.ts); any other clock changes nothing.
   */
  clock?: Clock;
}

/** Enqueue inside the transaction that causes the work, so the two commit together. */
export async function enqueueJob(tx: Executor, job: NewJob): Promise<string> {
  const clocked = job.clock instanceof TestClockTime ? job.clock : undefined;
  const [row] = await tx
    .insert(jobs)
    .values({
      kind: job.kind,
      lane: laneOf(job.kind),
      tenant: job.tenant,
      concurrencyKey: job.concurrencyKey ?? null,
      payload: withTraceContext(job.payload ?? {}),
      runAt: clocked ? clockedRunAt(clocked, job.runAt) : wallTimeOf(job.clock, job.runAt),
      ...(clocked ? { testClockId: clocked.testClockId } : {}),
    })
    .returning({ id: jobs.id, runAt: jobs.runAt });
  tellJobWrite({ lane: laneOf(job.kind), runAt: new Date(row!.runAt) });
  return row!.id;
}

/**
 * A test clock's job in wall time, from the clock's offset as it stands, not as `clock` read it:
 * the caller's reading may be stale (an advance moved the clock and shifted the account's queued
 * jobs meanwhile, here or on another instance). The clock's row is locked `for share` in the
 * insert's own statement, so an advance's jump (which updates that row before it shifts the jobs,
 * clock-advance.ts) either waits until this job is committed and then shifts it with the rest, or
 * has committed and this reads the offset it left. Either way the job keeps its due time on the
 * clock. A clock deleted meanwhile leaves the offset it was read with.
 */
function clockedRunAt(clock: TestClockTime, runAt: Date): SQL {
  return sql`(${runAt.toISOString()}::timestamptz - coalesce(
    (select offset_ms from test_clocks where id = ${clock.testClockId}::uuid for share),
    ${clock.offsetMs}::bigint) * interval '1 millisecond')`;
}

export { LeaseLostError };

/**
 * A job's outcome, recorded under the fence (its id and this claim's lease token), as plain text:
 * one per job run, and building the update through the query builder each time cost more of the
 * process than running it. $1 id, $2 lease token, $3 now; a retry's $4 next run and $5 error; an
 * end's $4 status and $5 error.
 */
const retryText = (attempts: string) => `update jobs
  set locked_by = null, locked_until = null, lease_token = null, updated_at = $3::timestamptz,
    run_at = $4::timestamptz, last_error = $5::text${attempts}
  where id = $1::uuid and lease_token = $2::uuid`;
const recordRetry = statement('jobs_record_retry_v1', retryText(''));
const recordPlannedRetry = statement('jobs_record_planned_retry_v1', retryText(', attempts = 0'));
const recordEnd = statement(
  'jobs_record_end_v1',
  `update jobs
  set locked_by = null, locked_until = null, lease_token = null, updated_at = $3::timestamptz,
    status = $4::job_status, last_error = $5::text
  where id = $1::uuid and lease_token = $2::uuid`,
);

/** How long after a job written its lane keeps to its shortest sleep: the writer's transaction may commit late. */
const LATE_JOB_COMMIT_MS = 5_000;

/** How long after a written job's due time its lane looks: the writer's transaction commits meanwhile. */
const JOB_COMMIT_GRACE_MS = 20;

/**
 * The fence, by hand: locks the job's row and checks that this claim's lease token is still the
 * row's, so a worker whose lease expired mid-run (a pause, a partition) cannot commit the effect a
 * second time after another worker took the job over. Throws LeaseLostError, which rolls the
 * effect back. The runner already fences every transaction a handler opens through the services
 * it holds (job-fence.ts); this is for a transaction made through another handle.
 */
export async function assertLease(tx: Executor, job: Pick<Job, 'id' | 'leaseToken'>): Promise<void> {
  const rows = await queryRows(
    tx,
    sql`select 1 from jobs where id = ${job.id} and lease_token = ${job.leaseToken}::uuid and status = 'pending' for update`,
  );
  if (rows.length === 0) throw new LeaseLostError(job.id);
}

export interface JobRunnerOptions {
  workerId?: string;
  /** How long a claim lasts without a heartbeat; a worker that dies loses its jobs to others after this. */
  leaseMs?: number;
  /** How often running jobs' leases are extended (default: a third of the lease). */
  heartbeatMs?: number;
  /** Most jobs one claim takes (`runDueJobs` takes up to this many per lane). */
  batchSize?: number;
  /**
   * A lane that claimed nothing looks again after this, then after twice as long each time it
   * finds nothing, up to `idleMaxMs`, or sooner when its next job falls due (the claim tells when)
   * or this process writes a job. Jobs that fall due without this process knowing (written by an
   * instance that runs no jobs, or a lapsed lease of a dead worker) wait at most `idleMaxMs`.
   */
  pollMs?: number;
  idleMaxMs?: number;
  /** Told each time a lane that claimed nothing goes to sleep, and for how long. */
  onLaneIdle?: (lane: Lane, sleepMs: number) => void;
  maxAttempts?: number;
  lanes?: Partial<Record<Lane, Partial<LaneLimits>>>;
  onError?: (error: unknown, job?: Job) => void;
  /** Awaited after a failed claim (e.g. until the database is back), so a failing store is not polled flat out. */
  waitAfterError?: (error: unknown) => Promise<void>;
  /**
   * Awaited before a job of a sandbox test clock runs: the clock's latest time is read, as another
   * instance may have advanced it (sandbox/test-clocks.ts). Not called for any other job.
   */
  beforeClockedJob?: (testClockId: string) => Promise<void>;
}

interface Running {
  lane: Lane;
  tenant: string;
  key: string | null;
  leaseToken: string;
  abort: AbortController;
}

/**
 * Runs due jobs from the `jobs` table, lane by lane. Each lane claims only as many jobs as it has
 * free slots, takes turns across tenants (see job-claims.ts), and leaves out tenants and keys that
 * already fill their share, so one tenant's backlog or one dead endpoint never takes every slot. A
 * running job's lease is extended by a heartbeat; a job whose lease was lost anyway is aborted
 * (its signal) and its result is not recorded. The fence covers database effects only: every
 * transaction a handler opens begins by checking the lease (job-fence.ts), so such a job cannot
 * commit an effect twice. What a handler does outside a transaction (a provider call, an HTTP
 * delivery) can happen twice; those calls carry the job's reference so the far side deduplicates.
 */
export class JobRunner {
  readonly workerId: string;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly idleMaxMs: number;
  /** Each idle lane's next wait when it finds nothing again (doubles up to idleMaxMs). */
  private readonly idleWaits = new Map<Lane, number>();
  /** When each lane's timer fires (epoch ms), to bring it forward. */
  private readonly laneDue = new Map<Lane, number>();
  /** When each lane last heard of a job written (epoch ms): it does not back off for idleMaxMs after. */
  private readonly lastWriteAt = new Map<Lane, number>();
  private stopListening: (() => void) | undefined;
  private readonly maxAttempts: number;
  private readonly lanes: LaneSettings;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Map<string, Running>();
  /** Jobs whose lease waits to be extended until a transaction of theirs ends (see extendOnceFree). */
  private readonly extending = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly claiming = new Set<Lane>();
  /** Lanes poked while claiming: their claim may have read before the new jobs committed. */
  private readonly poked = new Set<Lane>();
  private readonly claims = new Set<Promise<unknown>>();
  private readonly laneTimers = new Map<Lane, NodeJS.Timeout>();
  private heartbeat: NodeJS.Timeout | undefined;
  private stopping = false;

  /** The runner's own statements (claims, leases, outcomes): the jobs pool's. */
  private readonly db: Database;

  /**
   * @param appDb the application's database handle, as the handlers' services hold it: each run
   *   sees it replaced by its claim's fenced handle (see execute).
   */
  constructor(
    private readonly appDb: Database,
    private readonly clock: Clock,
    handlers: JobHandler[],
    private readonly options: JobRunnerOptions = {},
  ) {
    this.db = jobsOf(appDb);
    this.workerId = options.workerId ?? `worker-${randomUUID()}`;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.floor(this.leaseMs / 3));
    this.batchSize = options.batchSize ?? 20;
    this.pollMs = options.pollMs ?? 500;
    this.idleMaxMs = Math.max(this.pollMs, options.idleMaxMs ?? 5_000);
    this.maxAttempts = options.maxAttempts ?? 10;
    this.lanes = { ...DEFAULT_LANES };
    for (const [lane, limits] of Object.entries(options.lanes ?? {}))
      this.lanes[lane as Lane] = { ...DEFAULT_LANES[lane as Lane], ...limits };
    for (const handler of handlers) this.register(handler);
  }

  register(handler: JobHandler): void {
    this.handlers.set(handler.kind, handler);
  }

  /**
   * Runs every lane continuously: a lane claims whenever it has a free slot, and polls when idle.
   * In no trace, whoever starts it: the heartbeat's timer would keep the starter's context for ever.
   */
  start(): void {
    outsideTraces(() => {
      for (const lane of this.activeLanes()) this.pump(lane);
      this.heartbeat = setInterval(() => void this.extendHeldLeases(), this.heartbeatMs);
      this.heartbeat.unref();
      this.stopListening = onJobWrites((write) => this.jobsWritten(write));
    });
  }

  /**
   * Jobs were written (by this process, or another that told us: see wake-channel.ts): each lane
   * they may belong to stops backing off, and looks when the job falls due (a moment after, so the
   * writer's transaction has committed) or at its shortest idle wait when the due time is unknown.
   */
  jobsWritten(write: JobWrite = {}): void {
    if (this.stopping) return;
    const now = this.clock.now().getTime();
    for (const lane of this.activeLanes()) {
      if (write.lane !== undefined && write.lane !== lane) continue;
      this.idleWaits.delete(lane);
      this.lastWriteAt.set(lane, Date.now());
      const untilDue = write.runAt ? Math.max(0, write.runAt.getTime() - now) : undefined;
      // A claim in flight may have read before the write: one due now (or of unknown due time)
      // makes the lane claim again as soon as that claim ends.
      if (this.claiming.has(lane)) {
        if (untilDue === undefined || untilDue <= this.pollMs) this.poked.add(lane);
        continue;
      }
      this.bringForward(lane, untilDue === undefined ? this.pollMs : untilDue + JOB_COMMIT_GRACE_MS);
    }
  }

  /** Moves a sleeping lane's next look to within `ms`, if it was later (a lane claiming now looks again anyway). */
  private bringForward(lane: Lane, ms: number): void {
    if (!this.laneTimers.has(lane)) return;
    const at = Date.now() + ms;
    if ((this.laneDue.get(lane) ?? Number.POSITIVE_INFINITY) <= at) return;
    this.armLane(lane, ms);
  }

  private armLane(lane: Lane, ms: number): void {
    clearTimeout(this.laneTimers.get(lane));
    this.laneDue.set(lane, Date.now() + ms);
    this.laneTimers.set(
      lane,
      setTimeout(() => this.pump(lane), ms),
    );
  }

  /**
   * How long a lane that claimed nothing sleeps: until its next job falls due, within its idle
   * wait, which doubles from pollMs to idleMaxMs while it keeps finding nothing. A job due already
   * but not claimable (its tenant or key at their limit elsewhere, its row locked) is looked for
   * again after pollMs.
   */
  private idleWait(lane: Lane, nextDueAt: Date | null): number {
    const wait = this.idleWaits.get(lane) ?? this.pollMs;
    // Within LATE_JOB_COMMIT_MS of a write heard of, the lane keeps to pollMs: the writer's
    // transaction may commit after the claim that looked for it. A fixed window, not idleMaxMs: on
    // the embedded database (30 s) that kept every lane at pollMs for 30 s after each write.
    if (Date.now() - (this.lastWriteAt.get(lane) ?? Number.NEGATIVE_INFINITY) >= LATE_JOB_COMMIT_MS)
      this.idleWaits.set(lane, Math.min(wait * 2, this.idleMaxMs));
    if (nextDueAt === null) return wait;
    const untilDue = nextDueAt.getTime() - this.clock.now().getTime();
    return untilDue <= 0 ? this.pollMs : Math.min(wait, untilDue + JOB_COMMIT_GRACE_MS);
  }

  /**
   * Jobs of `lane` were just committed (a relay round stamped events and wrote their webhook
   * deliveries): claim now instead of at the lane's next poll.
   */
  poke(lane: Lane): void {
    if (this.stopping || !this.activeLanes().includes(lane)) return;
    if (this.claiming.has(lane)) this.poked.add(lane);
    else this.pump(lane);
  }

  /** Claims the due jobs of every lane (a batch each) and runs them to completion. Returns how many ran. */
  async runDueJobs(): Promise<number> {
    let ran = 0;
    const work: Promise<void>[] = [];
    for (const lane of this.activeLanes()) {
      const claimed = await this.claim(lane, this.batchSize);
      ran += claimed.length;
      work.push(...claimed.map((job) => this.track(this.execute(job))));
    }
    await Promise.all(work);
    return ran;
  }

  /** Stops claiming, waits for running jobs up to `graceMs`, then gives unfinished leases back. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    this.stopListening?.();
    for (const timer of this.laneTimers.values()) clearTimeout(timer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    // A claim still in flight gives its jobs back rather than starting them (see pump).
    await Promise.allSettled([...this.claims]);
    const drained = Promise.all([...this.inFlight]);
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, graceMs))]);
    const unfinished = this.running.size;
    for (const [id, held] of this.running) {
      // Jobs still running past the grace stop where they are (a delivery's request is aborted).
      held.abort.abort(new LeaseLostError(id));
      await this.db
        .update(jobs)
        .set({ lockedBy: null, lockedUntil: null, leaseToken: null })
        .where(and(eq(jobs.id, id), eq(jobs.leaseToken, held.leaseToken)));
    }
    // Their leases given back, they are due for the other instances: the wake channel tells them.
    if (unfinished > 0) tellJobWrite();
  }

  private activeLanes(): Lane[] {
    return [...new Set([...this.handlers.keys()].map(laneOf))];
  }

  /**
   * Fills a lane's free slots; called when a job of the lane ends, on the lane's poll timer, and by
   * a poke (from whatever woke it, a request's commit included): the claim, its timers and the
   * runs it starts are in no trace (each run starts its own, job-observation.ts).
   */
  private pump(lane: Lane): void {
    outsideTraces(() => this.fill(lane));
  }

  private fill(lane: Lane): void {
    if (this.stopping || this.claiming.has(lane)) return;
    const free = this.lanes[lane].concurrency - this.countRunning((r) => r.lane === lane);
    if (free <= 0) return;
    this.claiming.add(lane);
    clearTimeout(this.laneTimers.get(lane));
    this.laneDue.delete(lane);
    let claimedAny = false;
    let nextDueAt: Date | null = null;
    const claim = this.claimWithNextDue(lane, Math.min(free, this.batchSize))
      .then(async ({ claimed, nextDueAt: due }) => {
        claimedAny = claimed.length > 0;
        nextDueAt = due;
        // Stopped while claiming: the drain has begun, so these are given back unstarted.
        if (this.stopping) return this.giveBack(claimed);
        for (const job of claimed) void this.track(this.execute(job)).finally(() => this.pump(lane));
      })
      .catch(async (error) => {
        this.options.onError?.(error);
        // A failing store (the database away) is not polled flat out; once it is back, the lane
        // starts again from its shortest sleep (the backlog may have grown meanwhile).
        await this.options.waitAfterError?.(error);
        this.idleWaits.delete(lane);
      })
      .finally(() => {
        this.claims.delete(claim);
        this.claiming.delete(lane);
        if (this.stopping) return;
        // A lane that found work, or was poked meanwhile, looks again at once (it may have more
        // than one batch due); one that found nothing sleeps (idleWait).
        if (claimedAny || this.poked.delete(lane)) {
          this.idleWaits.delete(lane);
          this.armLane(lane, 0);
        } else {
          const sleepMs = this.idleWait(lane, nextDueAt);
          this.armLane(lane, sleepMs);
          this.options.onLaneIdle?.(lane, sleepMs);
        }
      });
    this.claims.add(claim);
  }

  /** Returns claimed jobs unstarted: the lease is cleared and the claim's attempt not counted. */
  private async giveBack(claimed: Job[]): Promise<void> {
    for (const job of claimed) {
      this.running.delete(job.id);
      await this.db
        .update(jobs)
        .set({ lockedBy: null, lockedUntil: null, leaseToken: null, attempts: sql`${jobs.attempts} - 1` })
        .where(and(eq(jobs.id, job.id), eq(jobs.leaseToken, job.leaseToken)));
    }
    // Due now for the other instances (this one is stopping): the wake channel tells them.
    if (claimed.length > 0) tellJobWrite();
  }

  private countRunning(match: (r: Running) => boolean): number {
    let n = 0;
    for (const r of this.running.values()) if (match(r)) n++;
    return n;
  }

  private async claim(lane: Lane, limit: number): Promise<Job[]> {
    return (await this.claimWithNextDue(lane, limit)).claimed;
  }

  private async claimWithNextDue(lane: Lane, limit: number): Promise<{ claimed: Job[]; nextDueAt: Date | null }> {
    const kinds = [...this.handlers.keys()].filter((k) => laneOf(k) === lane);
    const limits = this.lanes[lane];
    const perTenant = new Map<string, number>();
    const perKey = new Map<string, number>();
    for (const r of this.running.values()) {
      if (r.lane !== lane) continue;
      perTenant.set(r.tenant, (perTenant.get(r.tenant) ?? 0) + 1);
      if (r.key) perKey.set(r.key, (perKey.get(r.key) ?? 0) + 1);
    }
    const now = this.clock.now();
    const leaseToken = randomUUID();
    const { claimed: rows, nextDueAt } = await claimLaneJobsAndNextDue(this.db, {
      lane,
      kinds,
      limit,
      perTenant: limits.perTenant,
      perKey: limits.perKey,
      runningPerTenant: perTenant,
      runningPerKey: perKey,
      running: [...this.running.keys()],
      workerId: this.workerId,
      leaseToken,
      now,
      leaseUntil: new Date(now.getTime() + this.leaseMs),
    });
    const claimed = rows.map((r) => {
      const abort = new AbortController();
      this.running.set(r.id, { lane, tenant: r.tenant, key: r.concurrency_key, leaseToken, abort });
      return {
        id: r.id,
        kind: r.kind,
        payload: (r.payload ?? {}) as Record<string, unknown>,
        attempts: r.attempts,
        runAt: new Date(r.run_at),
        tenant: r.tenant,
        testClockId: r.test_clock_id,
        leaseToken,
        signal: abort.signal,
      };
    });
    return { claimed, nextDueAt };
  }

  private async extendHeldLeases(): Promise<void> {
    const held = [...this.running].map(([id, r]) => ({ id, leaseToken: r.leaseToken }));
    try {
      const leaseUntil = new Date(this.clock.now().getTime() + this.leaseMs);
      const { lost, busy } = await extendLeases(this.db, held, leaseUntil);
      for (const id of lost) this.running.get(id)?.abort.abort(new LeaseLostError(id));
      // Jobs inside a transaction of their own: their row lock keeps every other worker's claim off
      // them meanwhile; each lease is extended as soon as that transaction ends, not waited on here.
      for (const id of busy) this.extendOnceFree(id, leaseUntil);
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  /** Extends a busy job's lease when its row is free, once at a time per job; aborts it if the lease is gone. */
  private extendOnceFree(id: string, leaseUntil: Date): void {
    const held = this.running.get(id);
    if (!held || this.extending.has(id)) return;
    this.extending.add(id);
    void extendLeaseOnceFree(this.db, { id, leaseToken: held.leaseToken }, leaseUntil)
      .then((kept) => {
        if (!kept && this.running.get(id) === held) held.abort.abort(new LeaseLostError(id));
      })
      .catch((error) => this.options.onError?.(error))
      .finally(() => this.extending.delete(id));
  }

  private async execute(job: Job): Promise<void> {
    const handler = this.handlers.get(job.kind);
    const observed = startJobRun(job);
    let outcome: JobOutcome;
    let planned = true;
    try {
      if (job.testClockId) await this.options.beforeClockedJob?.(job.testClockId);
      outcome = handler
        ? await observed.within(() => onDatabase(handler, this.appDb, () => fencedOf(this.appDb, job)).run(job))
        : { status: 'failed', error: `No handler for ${job.kind}` };
    } catch (error) {
      // The fence's refusal arrives wrapped when it stops a transaction's BEGIN (drizzle's own error).
      if ([...causesOf(error)].some((cause) => cause instanceof LeaseLostError) || job.signal.aborted) {
        // Another worker owns the job now; it records the outcome.
        observed.finish('lease-lost');
        this.running.delete(job.id);
        return;
      }
      this.options.onError?.(error, job);
      planned = false;
      const message = error instanceof Error ? error.message : String(error);
      const backoffMs = Math.min(2 ** job.attempts * 1000, 3_600_000);
      outcome =
        job.attempts >= this.maxAttempts
          ? { status: 'failed', error: message }
          : { status: 'retry', at: new Date(this.clock.now().getTime() + backoffMs), error: message };
    }
    observed.finish(outcome.status);
    try {
      await this.record(job, outcome, planned);
    } catch (error) {
      // Unrecorded, the job keeps its lease until it lapses, then runs again (its effects are fenced).
      this.options.onError?.(error, job);
    } finally {
      this.running.delete(job.id);
    }
  }

  /** Records the outcome only while this claim's lease token is still the row's (the fence). */
  private async record(job: Job, outcome: JobOutcome, planned: boolean): Promise<void> {
    const now = this.clock.now().toISOString();
    if (outcome.status === 'retry') {
      // A retry the handler planned (the next poll, a repeating job's next run) starts its count
      // again: only failures in a row count toward maxAttempts.
      await runIn(this.db, planned ? recordPlannedRetry : recordRetry, [
        job.id,
        job.leaseToken,
        now,
        outcome.at.toISOString(),
        outcome.error ?? null,
      ]);
    } else {
      await runIn(this.db, recordEnd, [
        job.id,
        job.leaseToken,
        now,
        outcome.status,
        outcome.status === 'failed' ? outcome.error : null,
      ]);
    }
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }
}
