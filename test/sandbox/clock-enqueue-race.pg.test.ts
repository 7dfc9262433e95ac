import { eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema.js';
import { testClocks } from '../../src/db/sandbox-schema.js';
import { type Clock, TestClockTime } from '../../src/domain/clock.js';
import { enqueueJob } from '../../src/domain/jobs/job-runner.js';
import { sandboxPrincipalOf } from '../../src/domain/sandbox/sandbox-principal.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * A job enqueued for a clocked account while an advance of its clock runs keeps its due time on
 * the clock: the enqueue reads the clock's offset under a `for share` lock in its own statement,
 * and the advance's jump takes the clock row before it shifts the account's jobs. Each test holds
 * the jump's transaction open at a chosen point with a row lock of its own, enqueues with the
 * clock as read before the advance (its offset now stale), then lets the jump finish. Only real
 * concurrent transactions (PostgreSQL) can interleave them.
 */
const HOUR_MS = 3_600_000;
/** Never run: no runner has a handler for it, so the rows stay where the clock put them. */
const PROBE = 'test.clock-probe';

describe.skipIf(!onPostgres)('a job enqueued while its test clock advances', () => {
  let t: TestApp;
  const holders: pg.Client[] = [];
  beforeAll(async () => {
    // The run's shared database: no runner has a handler for the probes, and the advance's walk
    // looks at its own clock's jobs only.
    t = await createTestApp();
  });
  afterAll(async () => {
    for (const holder of holders) await holder.end().catch(() => undefined);
    await t.close();
  });

  /** A connection of the test's own, in an open transaction, that holds locks until committed. */
  async function holder(): Promise<{ client: pg.Client; pid: number }> {
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    holders.push(client);
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    await client.query('begin');
    return { client, pid: rows[0]!.pid };
  }

  /** Whether a backend waits for a lock `pid` holds (any backend's lock with `anyPid`), running a query like `like`. */
  const blockedBy = async (pid: number, like: string, anyPid = false) =>
    (
      await queryRows<{ n: number }>(
        t.services.db,
        sql`select count(*)::int as n from pg_stat_activity
            where (${anyPid} or ${pid}::int = any(pg_blocking_pids(pid)))
              and cardinality(pg_blocking_pids(pid)) > 0 and query like ${like}`,
      )
    )[0]!.n > 0;

  /** Whether `promise` has settled, read at once. */
  const flag = (promise: Promise<unknown>) => {
    const state = { done: false };
    void promise.finally(() => (state.done = true)).catch(() => undefined);
    return state;
  };

  async function clockedTenant() {
    const tenant = await seedTenant(t.services);
    const principal = sandboxPrincipalOf(principalOf(tenant.user.id), 'Test clocks');
    const made = await t.services.testClockService.create(principal, 'race');
    await t.services.testClockService.attach(principal, made.id);
    const clock = t.services.testClocks.clockFor(principal);
    expect(clock).toBeInstanceOf(TestClockTime);
    return { tenant, principal, id: made.id, clock };
  }

  /** A probe job due `inMs` after `clock`'s reading, enqueued in a transaction of its own. */
  const enqueue = (userId: string, clock: Clock, inMs: number) => {
    const dueOnClock = new Date(clock.now().getTime() + inMs);
    const id = t.services.db.transaction((tx) =>
      enqueueJob(tx, { kind: PROBE, tenant: userId, runAt: dueOnClock, clock }),
    );
    return { dueOnClock, id };
  };

  const runAtOf = async (jobId: string) =>
    (await t.services.db.select({ runAt: jobs.runAt }).from(jobs).where(eq(jobs.id, jobId)))[0]!.runAt.getTime();
  const offsetOf = async (clockId: string) =>
    (await t.services.db.select().from(testClocks).where(eq(testClocks.id, clockId)))[0]!.offsetMs;

  it('enqueued while the jump waits to take the clock (before it): shifted with the queued jobs', async () => {
    const { tenant, principal, id, clock } = await clockedTenant();
    // A queued job of the clock, far ahead, so the advance walks no step: one jump.
    const queued = enqueue(tenant.user.id, clock, 10 * HOUR_MS);
    const queuedId = await queued.id;
    // Held as a running job's handler holds its row (the lease fence): the jump waits for it.
    const running = await holder();
    await running.client.query('select 1 from jobs where id = $1 for update', [queuedId]);
    const advancing = t.services.testClockService.advance(principal, id, 3600);
    const advance = flag(advancing);
    await waitUntil(() => blockedBy(running.pid, '%'));

    // Enqueued with the clock read before the advance (offset 0), while the jump waits: it
    // commits (or, if the jump held the clock already, waits for it; released below either way).
    const late = enqueue(tenant.user.id, clock, 5 * HOUR_MS);
    const enqueued = flag(late.id);
    await waitUntil(async () => enqueued.done || (await blockedBy(-1, '%test_clocks%', true)));
    expect(advance.done).toBe(false);
    await running.client.query('commit');
    const answer = await advancing;
    const lateId = await late.id;
    expect(answer.jobsStillDue).toBe(0);

    // Both keep their due times on the clock: wall time plus the clock's offset.
    const offset = await offsetOf(id);
    expect(offset).toBeGreaterThan(3_590_000);
    expect((await runAtOf(queuedId)) + offset).toBe(queued.dueOnClock.getTime());
    expect((await runAtOf(lateId)) + offset).toBe(late.dueOnClock.getTime());
  });

  it('enqueued while the jump holds the clock (moved, jobs shifted, not committed): waits, then reads the new offset', async () => {
    const { tenant, principal, id, clock } = await clockedTenant();
    const queued = enqueue(tenant.user.id, clock, 10 * HOUR_MS);
    const queuedId = await queued.id;
    // The jump is held three times: first locking the queued jobs (a lock of the test's own on
    // the queued job), then taking the clock (a share lock of the test's own on it), then shifting
    // a job its first lock did not see (inserted meanwhile, and locked by a third connection). The
    // last leaves it with the clock moved, its jobs shifted and its transaction open.
    const onQueued = await holder();
    await onQueued.client.query('select 1 from jobs where id = $1 for update', [queuedId]);
    const advancing = t.services.testClockService.advance(principal, id, 3600);
    await waitUntil(() => blockedBy(onQueued.pid, '%lockClockJobs%'));
    const onClock = await holder();
    await onClock.client.query('select 1 from test_clocks where id = $1 for share', [id]);
    const [inserted] = await queryRows<{ id: string }>(
      t.services.db,
      sql`insert into jobs (kind, lane, tenant, payload, run_at, test_clock_id)
          values (${PROBE}, 'money', ${tenant.user.id}, '{}'::jsonb,
                  ${new Date(Date.now() + 8 * HOUR_MS).toISOString()}::timestamptz, ${id}::uuid)
          returning id`,
    );
    const insertedAt = await runAtOf(inserted!.id);
    const onJob = await holder();
    await onJob.client.query('select 1 from jobs where id = $1 for update', [inserted!.id]);
    await onQueued.client.query('commit');
    await waitUntil(() => blockedBy(onClock.pid, '%test_clocks%'));
    await onClock.client.query('commit');
    await waitUntil(() => blockedBy(onJob.pid, '%shiftClockJobs%'));

    // Enqueued with the clock read before the advance: it waits for the jump to commit.
    const late = enqueue(tenant.user.id, clock, 5 * HOUR_MS);
    const enqueued = flag(late.id);
    const [jump] = await queryRows<{ pid: number }>(
      t.services.db,
      sql`select pid from pg_stat_activity where ${onJob.pid}::int = any(pg_blocking_pids(pid))`,
    );
    await waitUntil(async () => enqueued.done || (await blockedBy(jump!.pid, '%test_clocks%')));
    expect(enqueued.done).toBe(false);
    await onJob.client.query('commit');
    await advancing;
    const lateId = await late.id;

    const offset = await offsetOf(id);
    expect(offset).toBeGreaterThan(3_590_000);
    expect((await runAtOf(queuedId)) + offset).toBe(queued.dueOnClock.getTime());
    expect((await runAtOf(lateId)) + offset).toBe(late.dueOnClock.getTime());
    expect(await runAtOf(inserted!.id)).toBe(insertedAt - offset);
  });
});
