import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { enqueueJob, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { onPostgres, testDatabase } from '../helpers/database.js';

describe.skipIf(!onPostgres)('job claims across workers (PostgreSQL)', () => {
  it('three workers draining 300 jobs concurrently run each exactly once', async () => {
    const { db } = await testDatabase();
    const clock = new ManualClock(new Date('2031-01-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const runs = new Map<string, number>();
    const handler = {
      kind,
      run: async (job: { id: string }) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        return { status: 'done' as const };
      },
    };
    for (let i = 0; i < 300; i++) await enqueueJob(db, { kind, runAt: clock.now(), tenant: '' });
    const workers = [1, 2, 3].map((n) => new JobRunner(db, clock, [handler], { workerId: `w${n}`, batchSize: 7 }));
    await Promise.all(
      workers.map(async (worker) => {
        while ((await worker.runDueJobs()) > 0);
      }),
    );
    expect(runs.size).toBe(300);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });
});
