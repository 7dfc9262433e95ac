import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, queryRows } from '../../src/db/client.js';
import { LeaseLostError } from '../../src/db/job-fence.js';
import { ManualClock } from '../../src/domain/clock.js';
import { enqueueJob, type Job, type JobOutcome, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { waitUntil, signal } from '../helpers/wait.js';

const KIND = 'test.fence-edges';
const IDLE_KIND = 'test.fence-edges-idle';

/**
 * A handler of two fenced transactions, each writing one effect row, with a pause inside the first
 * and another between the two: the places where a lease can change hands while the job runs.
 * Its database is a property, so the runner binds it to the claim's fenced handle.
 */
class TwoStepHandler {
  readonly kind = KIND;
  readonly insideFirst = signal();
  readonly finishFirst = signal();
  readonly betweenSteps = signal();
  readonly secondStep = signal();
  error: unknown;

  constructor(
    readonly db: Database,
    private readonly worker: string,
    private readonly pauses: boolean,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const effect = (tx: Pick<Database, 'execute'>, step: string) =>
      tx.execute(
        sql`insert into test_fence_effects (job_id, worker, step) values (${job.id}, ${this.worker}, ${step})`,
      );
    try {
      await this.db.transaction(async (tx) => {
        await effect(tx, 'first');
        if (!this.pauses) return;
        this.insideFirst.resolve();
        await this.finishFirst.promise;
      });
      if (this.pauses) {
        this.betweenSteps.resolve();
        await this.secondStep.promise;
      }
      await this.db.transaction(async (tx) => effect(tx, 'second'));
      return { status: 'done' };
    } catch (error) {
      this.error = error;
      throw error;
    }
  }
}

/** A job that waits outside any transaction until told to finish. */
class IdleHandler {
  readonly kind = IDLE_KIND;
  readonly started = signal();
  readonly finish = signal();
  job: Job | undefined;

  async run(job: Job): Promise<JobOutcome> {
    this.job = job;
    this.started.resolve();
    await this.finish.promise;
    return { status: 'done' };
  }
}

/**
 * The lease fence's edges on PostgreSQL, where two workers really run at once: the fence locks the
 * job's row for the whole transaction (job-fence.ts), so a takeover cannot claim a job while one of
 * its fenced transactions is open, and a takeover between two transactions of one run refuses the
 * second.
 */
describe.skipIf(!onPostgres)('the lease fence between two workers (PostgreSQL)', () => {
  const clock = new ManualClock(new Date());
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock, isolated: true });
    await t.services.db.execute(
      sql`create table if not exists test_fence_effects (job_id uuid not null, worker text not null, step text not null)`,
    );
  });
  afterAll(() => t.close());

  const effectsOf = (jobId: string) =>
    queryRows<{ worker: string; step: string }>(
      t.services.db,
      sql`select worker, step from test_fence_effects where job_id = ${jobId} order by worker, step`,
    );

  it('a takeover finds nothing to claim while a fenced transaction is open; between two transactions it takes the job, and the first holder writes nothing more', async () => {
    const jobId = await enqueueJob(t.services.db, { kind: KIND, runAt: clock.now(), tenant: '' });
    const first = new TwoStepHandler(t.services.db, 'a', true);
    const errors: unknown[] = [];
    const runnerA = new JobRunner(t.services.db, clock, [first], {
      workerId: 'a',
      leaseMs: 30_000,
      onError: (error) => errors.push(error),
    });
    const runningA = runnerA.runDueJobs();
    await first.insideFirst.promise;

    // A's lease has lapsed by the clock, but its open transaction holds the job's row: the claim
    // skips it.
    clock.advance(31_000);
    const second = new TwoStepHandler(t.services.db, 'b', false);
    const runnerB = new JobRunner(t.services.db, clock, [second], { workerId: 'b', leaseMs: 30_000 });
    expect(await runnerB.runDueJobs()).toBe(0);

    // A's first transaction commits; before its second, B takes the job over and runs it whole.
    first.finishFirst.resolve();
    await first.betweenSteps.promise;
    expect(await runnerB.runDueJobs()).toBe(1);

    // A's second transaction is refused at its fence: the effect is B's alone.
    first.secondStep.resolve();
    await runningA;
    // Refused at BEGIN (drizzle wraps the fence's error in its own).
    expect(String(first.error)).toMatch(/failed query: begin/i);
    expect((first.error as Error).cause).toBeInstanceOf(LeaseLostError);
    // The runner knows it for a lost lease, not a failure: nothing reported, nothing recorded.
    expect(errors).toEqual([]);
    expect(await effectsOf(jobId)).toEqual([
      { worker: 'a', step: 'first' },
      { worker: 'b', step: 'first' },
      { worker: 'b', step: 'second' },
    ]);
    // Done once, by B's claim (the second attempt); A's refusal recorded nothing on the job.
    const [job] = await queryRows<{ status: string; attempts: number }>(
      t.services.db,
      sql`select status::text as status, attempts from jobs where id = ${jobId}`,
    );
    expect(job).toEqual({ status: 'done', attempts: 2 });
  });

  it("the heartbeat extends a worker's other leases while one job's fenced transaction is open, and that job's as the transaction ends", async () => {
    const longId = await enqueueJob(t.services.db, { kind: KIND, runAt: clock.now(), tenant: 'long' });
    const idleId = await enqueueJob(t.services.db, { kind: IDLE_KIND, runAt: clock.now(), tenant: 'idle' });
    const long = new TwoStepHandler(t.services.db, 'a', true);
    const idle = new IdleHandler();
    const errors: unknown[] = [];
    const runnerA = new JobRunner(t.services.db, clock, [long, idle], {
      workerId: 'a',
      leaseMs: 30_000,
      onError: (error) => errors.push(error),
    });
    const claimedAt = clock.now().getTime();
    const runningA = runnerA.runDueJobs();
    await Promise.all([long.insideFirst.promise, idle.started.promise]);
    const leaseOf = async (id: string) =>
      (
        await queryRows<{ until: string }>(
          t.services.db,
          sql`select locked_until::text as until from jobs where id = ${id}`,
        )
      )[0]!.until;
    const longLease = await leaseOf(longId);

    // A beat while the long job's transaction holds its row: it returns at once (it used to wait
    // for that transaction), extends the idle job and aborts neither.
    clock.advance(20_000);
    let returned = false;
    void (runnerA as unknown as { extendHeldLeases(): Promise<void> }).extendHeldLeases().then(() => {
      returned = true;
    });
    // The long transaction stays open until this test lets it go: a beat that waited for its row
    // would never return here.
    await waitUntil(() => returned, 2_000);
    expect(new Date(await leaseOf(idleId)).getTime()).toBe(claimedAt + 20_000 + 30_000);
    expect(await leaseOf(longId)).toBe(longLease);
    expect(idle.job!.signal.aborted).toBe(false);
    expect(errors).toEqual([]);

    // The long job's first transaction commits: its lease is extended right then, by the beat's
    // statement that waited for the row.
    long.finishFirst.resolve();
    await long.betweenSteps.promise;
    await waitUntil(async () => (await leaseOf(longId)) !== longLease);
    expect(new Date(await leaseOf(longId)).getTime()).toBe(claimedAt + 20_000 + 30_000);

    // Past both jobs' first leases: their extended leases hold, so another worker takes neither.
    clock.advance(15_000);
    const runnerB = new JobRunner(
      t.services.db,
      clock,
      [new TwoStepHandler(t.services.db, 'b', false), new IdleHandler()],
      {
        workerId: 'b',
        leaseMs: 30_000,
      },
    );
    expect(await runnerB.runDueJobs()).toBe(0);

    long.secondStep.resolve();
    idle.finish.resolve();
    await runningA;
    expect(long.error).toBeUndefined();
    expect(await effectsOf(longId)).toEqual([
      { worker: 'a', step: 'first' },
      { worker: 'a', step: 'second' },
    ]);
    expect(errors).toEqual([]);
  });
});
