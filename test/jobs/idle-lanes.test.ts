import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, queryRows } from '../../src/db/client.js';
import { onJobWrites } from '../../src/db/plain-sql.js';
import { jobs } from '../../src/db/schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { claimLaneJobsAndNextDue } from '../../src/domain/jobs/job-claims.js';
import { enqueueJob, type Job, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { testDatabase } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * An idle lane sleeps longer each time it finds nothing (pollMs, doubling, up to idleMaxMs), so an
 * idle instance stops polling the database several times a second; it still runs a job when it
 * falls due, because the claim tells it when the next one does and a job this process writes wakes it.
 */
describe('an idle job lane', () => {
  let db: Database;
  const runners: JobRunner[] = [];
  beforeAll(async () => {
    db = (await testDatabase()).db;
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.stop(1_000)));
  });

  const runnerOf = (kind: string, clock: ManualClock, options: ConstructorParameters<typeof JobRunner>[3]) => {
    const ran: Job[] = [];
    const sleeps: number[] = [];
    const runner = new JobRunner(db, clock, [{ kind, run: async (job) => (ran.push(job), { status: 'done' }) }], {
      ...options,
      onLaneIdle: (_lane, ms) => sleeps.push(ms),
    });
    runners.push(runner);
    return { runner, ran, sleeps };
  };

  it('sleeps twice as long each time it finds nothing, up to its longest wait', async () => {
    const clock = new ManualClock(new Date('2031-01-01T00:00:00Z'));
    const { runner, sleeps } = runnerOf(`k-${randomUUID()}`, clock, { pollMs: 10, idleMaxMs: 80 });
    runner.start();
    await waitUntil(() => sleeps.length >= 6);
    expect(sleeps.slice(0, 6)).toEqual([10, 20, 40, 80, 80, 80]);
  });

  it('wakes for a job this process writes, however long it was sleeping', async () => {
    const clock = new ManualClock(new Date('2031-02-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    // Its first sleep is already an hour: only the write's wake-up can get the job run within the wait.
    const { runner, ran, sleeps } = runnerOf(kind, clock, { pollMs: 3_600_000, idleMaxMs: 3_600_000 });
    runner.start();
    await waitUntil(() => sleeps.length >= 1);
    expect(sleeps).toEqual([3_600_000]);
    const id = await db.transaction((tx) => enqueueJob(tx, { kind, runAt: clock.now(), tenant: '' }));
    await waitUntil(() => ran.length === 1);
    expect(ran[0]!.id).toBe(id);
  });

  it('keeps to its shortest sleep for a while after a write, whose transaction may commit late', async () => {
    const clock = new ManualClock(new Date('2031-02-15T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const { runner, sleeps } = runnerOf(kind, clock, { pollMs: 10, idleMaxMs: 3_600_000 });
    runner.start();
    await waitUntil(() => sleeps.length >= 4);
    expect(sleeps.slice(0, 4)).toEqual([10, 20, 40, 80]);
    // A job of this lane written, due in a day (so nothing runs): the lane stops doubling its sleep.
    const wroteAt = Date.now();
    runner.jobsWritten({ lane: 'money', runAt: new Date(clock.now().getTime() + 86_400_000) });
    const from = sleeps.length;
    await waitUntil(() => sleeps.length >= from + 4);
    expect(sleeps.slice(from + 1, from + 4)).toEqual([10, 10, 10]);
    // For 5 s, not for the whole of its longest sleep (an hour here): then it doubles again.
    await waitUntil(() => sleeps.slice(from + 1).some((ms) => ms > 10));
    expect(Date.now() - wroteAt).toBeGreaterThanOrEqual(5_000);
    expect(sleeps.slice(from + 1).filter((ms) => ms > 10)).toEqual([20]);
  });

  it('sleeps only until its next job falls due', async () => {
    const clock = new ManualClock(new Date('2031-03-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    await db.insert(jobs).values({ kind, lane: 'money', tenant: '', runAt: new Date(clock.now().getTime() + 30_000) });
    const { runner, sleeps } = runnerOf(kind, clock, { pollMs: 60_000, idleMaxMs: 3_600_000 });
    runner.start();
    await waitUntil(() => sleeps.length >= 1);
    // Due in 30 s: it sleeps that long (and a moment for the writer's commit), not its poll of a minute.
    expect(sleeps[0]).toBe(30_020);
  });

  it('tells of the jobs it gives back when it stops, for the other instances to take at once', async () => {
    const clock = new ManualClock(new Date('2031-03-15T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    let started = false;
    // A job still running when the runner stops: it is aborted and its lease given back.
    const runner = new JobRunner(
      db,
      clock,
      [
        {
          kind,
          run: (job) =>
            new Promise((resolve) => {
              started = true;
              job.signal.addEventListener('abort', () => resolve({ status: 'done' }));
            }),
        },
      ],
      { pollMs: 10 },
    );
    await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    runner.start();
    await waitUntil(() => started);
    const told: unknown[] = [];
    const stopListening = onJobWrites((write) => told.push(write));
    try {
      await runner.stop(0);
      expect(told).toHaveLength(1);
    } finally {
      stopListening();
    }
  });

  it('finds at its longest wait a job written where no one told it', async () => {
    const clock = new ManualClock(new Date('2031-04-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const { runner, ran, sleeps } = runnerOf(kind, clock, { pollMs: 10, idleMaxMs: 40 });
    runner.start();
    await waitUntil(() => sleeps.length >= 3);
    // As another process would: a plain insert tells no one in this one.
    await queryRows(
      db,
      sql`insert into jobs (kind, lane, tenant, run_at) values (${kind}, 'money', '', ${clock.now().toISOString()}::timestamptz)`,
    );
    await waitUntil(() => ran.length === 1);
  });
});

describe('a claim that takes nothing', () => {
  it('tells when the lane can next claim: the earliest due time no live lease holds', async () => {
    const db = (await testDatabase()).db;
    const now = new Date('2031-05-01T00:00:00Z');
    const kind = `k-${randomUUID()}`;
    const request = (at: Date) => ({
      lane: 'money' as const,
      kinds: [kind],
      limit: 10,
      perTenant: 4,
      perKey: 4,
      runningPerTenant: new Map<string, number>(),
      runningPerKey: new Map<string, number>(),
      running: [],
      workerId: 'w',
      leaseToken: randomUUID(),
      now: at,
      leaseUntil: new Date(at.getTime() + 60_000),
    });
    expect(await claimLaneJobsAndNextDue(db, request(now))).toEqual({ claimed: [], nextDueAt: null });
    const tenant = `t-${randomUUID()}`;
    const leased = (tenantName: string, runAt: number, leaseEnds: number) => ({
      kind,
      lane: 'money' as const,
      tenant: tenantName,
      runAt: new Date(now.getTime() + runAt),
      lockedBy: 'other',
      lockedUntil: new Date(now.getTime() + leaseEnds),
    });
    await db.insert(jobs).values([
      { kind, lane: 'money', tenant, runAt: new Date(now.getTime() + 90_000) },
      // Due already but leased (another worker runs them): they do not make the lane look early,
      // though there are more of them than the one the tenant's probe would once have looked at.
      ...[1, 2, 3, 4, 5].map(() => leased(`${tenant}-2`, -1_000, 45_000)),
      // Due in 30 s, behind the leased ones of its tenant.
      { kind, lane: 'money', tenant: `${tenant}-2`, runAt: new Date(now.getTime() + 30_000) },
    ]);
    const idle = await claimLaneJobsAndNextDue(db, request(now));
    expect(idle).toEqual({ claimed: [], nextDueAt: new Date(now.getTime() + 30_000) });
    // A lease that lapsed (its worker died) is claimable at once: the claim takes it.
    await db.insert(jobs).values(leased(`${tenant}-3`, -5_000, -1_000));
    const lapsed = await claimLaneJobsAndNextDue(db, request(now));
    expect(lapsed.claimed).toHaveLength(1);
    expect(lapsed.nextDueAt).toBeNull();
  });
});
