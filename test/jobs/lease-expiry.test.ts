import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema.js';
import { ManualClock, systemClock } from '../../src/domain/clock.js';
import { assertLease, enqueueJob, type Job, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { testDatabase } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/** The job's side effect: a row written in a transaction fenced by the job's lease. */
async function effect(db: Database, job: Job): Promise<void> {
  await db.transaction(async (tx) => {
    await assertLease(tx, job);
    await tx.execute(sql`insert into lease_test_effects (job_id) values (${job.id})`);
  });
}

const effectsOf = async (db: Database, id: string) =>
  Number(
    (
      (await db.execute(sql`select count(*) as n from lease_test_effects where job_id = ${id}`)) as unknown as {
        rows: Array<{ n: string | number }>;
      }
    ).rows[0]!.n,
  );

describe('a job whose lease expires mid-run', () => {
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
    await db.execute(sql`create table if not exists lease_test_effects (job_id uuid not null)`);
  });

  it('keeps its lease by heartbeat while it runs three leases long: no other worker runs it again', async () => {
    const kind = `k-${randomUUID()}`;
    const slow = async (job: Job) => {
      await new Promise((r) => setTimeout(r, 3_000));
      await effect(db, job);
      return { status: 'done' as const };
    };
    const options = { leaseMs: 1_000, heartbeatMs: 200, pollMs: 50 };
    const first = new JobRunner(db, systemClock, [{ kind, run: slow }], { ...options, workerId: 'first' });
    const second = new JobRunner(db, systemClock, [{ kind, run: slow }], { ...options, workerId: 'second' });
    const id = await enqueueJob(db, { kind, runAt: new Date(), tenant: '' });
    first.start();
    await waitUntil(async () => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!.lockedBy === 'first');
    second.start();
    try {
      await waitUntil(async () => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!.status === 'done', 8_000);
    } finally {
      await Promise.all([first.stop(10), second.stop(10)]);
    }
    expect(await effectsOf(db, id)).toBe(1);
    expect((await db.select().from(jobs).where(eq(jobs.id, id)))[0]).toMatchObject({ attempts: 1, status: 'done' });
  });

  it('when the lease is taken over anyway (a long pause), the first holder cannot commit its effect or its result', async () => {
    const clock = new ManualClock(new Date('2033-01-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    let resume!: () => void;
    const paused = new JobRunner(
      db,
      clock,
      [
        {
          kind,
          run: async (job) => {
            await new Promise<void>((r) => (resume = r)); // the process stalls here, past its lease
            await effect(db, job);
            return { status: 'failed', error: 'stale result' };
          },
        },
      ],
      { workerId: 'paused', leaseMs: 30_000 },
    );
    const takeover = new JobRunner(
      db,
      clock,
      [{ kind, run: async (job) => (await effect(db, job), { status: 'done' }) }],
      { workerId: 'takeover', leaseMs: 30_000 },
    );
    const id = await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    const stalled = paused.runDueJobs();
    await waitUntil(() => resume !== undefined);
    clock.advance(30_001);
    expect(await takeover.runDueJobs()).toBe(1);
    resume();
    await stalled;
    expect(await effectsOf(db, id)).toBe(1);
    expect((await db.select().from(jobs).where(eq(jobs.id, id)))[0]).toMatchObject({
      status: 'done',
      attempts: 2,
      lastError: null,
    });
  });
});
