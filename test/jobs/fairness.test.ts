import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { ManualClock, systemClock } from '../../src/domain/clock.js';
import { claimLaneJobs } from '../../src/domain/jobs/job-claims.js';
import { enqueueJob, type Job, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { testDatabase } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/** Bulk-enqueues `count` due jobs of one tenant (and key), as a backlog would pile up. */
async function backlog(db: Database, kind: string, tenant: string, count: number, at: Date, key?: string) {
  await db.execute(sql`insert into jobs (kind, lane, tenant, concurrency_key, run_at)
    select ${kind}, 'money', ${tenant}, ${key ?? null}, ${at.toISOString()}::timestamptz - (n || ' ms')::interval
    from generate_series(1, ${count}) n`);
}

describe('fair claims', () => {
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
  });

  it('a claim takes turns across tenants: a deep backlog gets no more of it than a single job', async () => {
    const clock = new ManualClock(new Date('2032-01-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    await backlog(db, kind, 'tenant-a', 500, clock.now());
    await enqueueJob(db, { kind, runAt: clock.now(), tenant: 'tenant-b' });
    await enqueueJob(db, { kind, runAt: clock.now(), tenant: 'tenant-b' });
    await enqueueJob(db, { kind, runAt: clock.now(), tenant: 'tenant-c' });
    const ran: Job[] = [];
    const runner = new JobRunner(db, clock, [{ kind, run: async (job) => (ran.push(job), { status: 'done' }) }], {
      batchSize: 6,
    });
    expect(await runner.runDueJobs()).toBe(6);
    const count = (tenant: string) => ran.filter((job) => job.tenant === tenant).length;
    expect([count('tenant-a'), count('tenant-b'), count('tenant-c')]).toEqual([3, 2, 1]);
  });

  it('a running lane leaves a busy tenant out, so another tenant starts at once', async () => {
    const kind = `k-${randomUUID()}`;
    await backlog(db, kind, 'slow-tenant', 200, systemClock.now());
    const started = new Map<string, number>();
    const runner = new JobRunner(
      db,
      systemClock,
      [
        {
          kind,
          run: async (job) => {
            started.set(job.id, Date.now());
            if (job.tenant === 'slow-tenant') await new Promise((r) => setTimeout(r, 3_000));
            return { status: 'done' };
          },
        },
      ],
      { pollMs: 50, lanes: { money: { concurrency: 4, perTenant: 2 } } },
    );
    runner.start();
    try {
      await waitUntil(() => started.size >= 2);
      const enqueuedAt = Date.now();
      const id = await enqueueJob(db, { kind, runAt: new Date(), tenant: 'quick-tenant' });
      await waitUntil(() => started.has(id), 2_000);
      expect(started.get(id)! - enqueuedAt).toBeLessThan(500);
      // The slow tenant never held more than its share of the lane.
      expect(started.size).toBeLessThanOrEqual(3);
    } finally {
      await runner.stop(10);
    }
  });

  it('jobs sharing a concurrency key run at most perKey at once', async () => {
    const clock = new ManualClock(new Date('2032-02-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    await backlog(db, kind, 'tenant-k', 20, clock.now(), 'endpoint-1');
    await backlog(db, kind, 'tenant-k', 20, clock.now(), 'endpoint-2');
    const ran: Job[] = [];
    const runner = new JobRunner(db, clock, [{ kind, run: async (job) => (ran.push(job), { status: 'done' }) }], {
      batchSize: 20,
      lanes: { money: { concurrency: 20, perTenant: 20, perKey: 3 } },
    });
    expect(await runner.runDueJobs()).toBe(6);
  });

  it('a claim fills only what is left of a limit: a tenant or key one below it gets one more, not a full share', async () => {
    const now = new Date('2032-02-01T00:00:00Z');
    const kind = `k-${randomUUID()}`;
    const [tenant, other, key] = [`t-${randomUUID()}`, `t-${randomUUID()}`, `key-${randomUUID()}`];
    await backlog(db, kind, tenant, 5, now);
    const claim = (running: { tenant?: number; key?: number }) =>
      claimLaneJobs(db, {
        lane: 'money',
        kinds: [kind],
        limit: 10,
        perTenant: 2,
        perKey: 2,
        runningPerTenant: new Map(running.tenant ? [[tenant, running.tenant]] : []),
        runningPerKey: new Map(running.key ? [[key, running.key]] : []),
        running: [],
        workerId: 'caps',
        leaseToken: randomUUID(),
        now,
        leaseUntil: new Date(now.getTime() + 60_000),
      });
    // One of the tenant's jobs already runs here: a limit of 2 leaves room for one.
    expect((await claim({ tenant: 1 })).map((r) => r.tenant)).toEqual([tenant]);
    // Three jobs of one key from two tenants, one of the key's already running: one more.
    await backlog(db, kind, other, 2, now, key);
    await enqueueJob(db, { kind, runAt: now, tenant: `t-${randomUUID()}`, concurrencyKey: key });
    const keyed = (await claim({ tenant: 2, key: 1 })).filter((r) => r.concurrency_key === key);
    expect(keyed).toHaveLength(1);
  });
});
