import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { enqueueJob, type Job, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { testDatabase } from '../helpers/database.js';
import { signal, waitUntil } from '../helpers/wait.js';

const jobRow = async (db: Database, id: string) => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!;

describe('the job runner', () => {
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
  });

  it('runs a job only when due by the injected clock, then records it done', async () => {
    const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const ran: Job[] = [];
    const runner = new JobRunner(db, clock, [{ kind, run: async (job) => (ran.push(job), { status: 'done' }) }]);
    const id = await enqueueJob(db, {
      kind,
      payload: { bill: 'B1' },
      runAt: new Date('2030-01-01T00:01:00Z'),
      tenant: '',
    });
    expect(await runner.runDueJobs()).toBe(0);
    clock.advance(60_000);
    expect(await runner.runDueJobs()).toBe(1);
    expect(ran[0]).toMatchObject({ id, payload: { bill: 'B1' }, attempts: 1 });
    expect(await runner.runDueJobs()).toBe(0);
    expect(await jobRow(db, id)).toMatchObject({ status: 'done', lockedBy: null });
  });

  it('a poked lane claims at once instead of at its next poll', async () => {
    const clock = new ManualClock(new Date('2030-03-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const ran: Job[] = [];
    const runner = new JobRunner(db, clock, [{ kind, run: async (job) => (ran.push(job), { status: 'done' }) }], {
      pollMs: 600_000,
    });
    const id = await enqueueJob(db, { kind, runAt: new Date('2030-03-01T00:01:00Z'), tenant: '' });
    runner.start();
    try {
      // Not due at the first claim; the next poll is ten minutes away.
      clock.advance(60_000);
      runner.poke('money');
      await waitUntil(() => ran.length === 1, 10_000);
      expect(ran[0]!.id).toBe(id);
    } finally {
      await runner.stop(1_000);
    }
  });

  it('retries at the time the handler names, and backs off when the handler throws', async () => {
    const clock = new ManualClock(new Date('2030-02-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    let calls = 0;
    const runner = new JobRunner(db, clock, [
      {
        kind,
        run: async () => {
          calls++;
          if (calls === 1)
            return { status: 'retry', at: new Date(clock.now().getTime() + 5 * 60_000), error: 'upstream 503' };
          if (calls === 2) throw new Error('boom');
          return { status: 'done' };
        },
      },
    ]);
    const id = await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    await runner.runDueJobs();
    expect(await jobRow(db, id)).toMatchObject({
      status: 'pending',
      lastError: 'upstream 503',
      runAt: new Date('2030-02-01T00:05:00Z'),
    });
    clock.advance(5 * 60_000 - 1);
    expect(await runner.runDueJobs()).toBe(0);
    clock.advance(1);
    await runner.runDueJobs();
    const afterThrow = await jobRow(db, id);
    expect(afterThrow.lastError).toBe('boom');
    // 2^attempts seconds; the planned retry started the count again, so this is the first failure.
    expect(afterThrow.runAt.getTime()).toBe(clock.now().getTime() + 2000);
    clock.advance(2000);
    await runner.runDueJobs();
    expect((await jobRow(db, id)).status).toBe('done');
  });

  it('a worker that dies holding a lease loses the job to another after the lease, and its late result is ignored', async () => {
    const clock = new ManualClock(new Date('2030-03-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    let releaseStuck!: () => void;
    const stuckStarted = signal();
    const stuck = new JobRunner(
      db,
      clock,
      [
        {
          kind,
          run: () =>
            new Promise((r) => {
              releaseStuck = () => r({ status: 'failed', error: 'stale' });
              stuckStarted.resolve();
            }),
        },
      ],
      { workerId: 'stuck', leaseMs: 30_000 },
    );
    const healthy = new JobRunner(db, clock, [{ kind, run: async () => ({ status: 'done' }) }], {
      workerId: 'healthy',
      leaseMs: 30_000,
    });
    const id = await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });

    const stuckRun = stuck.runDueJobs();
    await stuckStarted.promise; // claimed: a handler runs only after its job's lease is taken
    expect(await healthy.runDueJobs()).toBe(0); // leased
    clock.advance(30_001);
    expect(await healthy.runDueJobs()).toBe(1);
    releaseStuck();
    await stuckRun;
    expect(await jobRow(db, id)).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('stop() gives back the leases of jobs it could not finish', async () => {
    const clock = new ManualClock(new Date('2030-04-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const started = signal();
    const runner = new JobRunner(db, clock, [{ kind, run: () => (started.resolve(), new Promise(() => undefined)) }], {
      workerId: 'leaving',
    });
    const id = await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    void runner.runDueJobs();
    await started.promise;
    expect((await jobRow(db, id)).lockedBy).toBe('leaving');
    await runner.stop(20);
    expect(await jobRow(db, id)).toMatchObject({ lockedBy: null, lockedUntil: null, status: 'pending' });
  });

  it('a repeating job is not failed by one error after many planned runs: planned retries do not count', async () => {
    const clock = new ManualClock(new Date('2030-05-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    let calls = 0;
    const runner = new JobRunner(
      db,
      clock,
      [
        {
          kind,
          run: async () => {
            calls++;
            if (calls === 13) throw new Error('database busy once');
            return { status: 'retry', at: new Date(clock.now().getTime() + 60_000) };
          },
        },
      ],
      { maxAttempts: 10 },
    );
    const id = await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    for (let run = 0; run < 13; run++) {
      expect(await runner.runDueJobs()).toBe(1);
      clock.advance(60_000);
    }
    expect(await jobRow(db, id)).toMatchObject({ status: 'pending', lastError: 'database busy once', attempts: 1 });
  });

  it('a claim in flight when stop() begins gives its jobs back instead of starting them', async () => {
    const clock = new ManualClock(new Date('2030-06-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    let ran = 0;
    const runner = new JobRunner(db, clock, [{ kind, run: async () => (ran++, { status: 'done' }) }], {
      workerId: 'stopping',
    });
    const id = await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    runner.start(); // its first claim is now in flight
    await runner.stop(1_000);
    // Read after stop(): on one connection this also runs after any claim stop() did not wait for.
    expect(await jobRow(db, id)).toMatchObject({ status: 'pending', lockedBy: null, leaseToken: null, attempts: 0 });
    expect(ran).toBe(0);
  });
});
