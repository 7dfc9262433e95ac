import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, queryRows } from '../../src/db/client.js';
import { listenForWakes, type Wake, wakeSender } from '../../src/db/wake-channel.js';
import { ManualClock } from '../../src/domain/clock.js';
import { type Job, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { startRelay } from '../../src/domain/events/relay.js';
import { createTestServices, sandboxPrincipal, seedTenant } from '../helpers/app.js';
import { announceWrites, startWorkers } from '../../src/workers.js';
import type { SandboxPrincipal } from '../../src/domain/sandbox/sandbox-principal.js';
import pino from 'pino';
import { isolatedTestDatabase, onPostgres } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * An instance started with WORKERS=false runs no relay and no job runner; the instances that do
 * sleep long when idle, so it tells them of what it writes over PostgreSQL's LISTEN/NOTIFY. The
 * sender and the listener here stand for the two instances (same database, separate sessions).
 */
describe.skipIf(!onPostgres)('the wake channel (PostgreSQL)', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await isolatedTestDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('carries each kind of wake, a burst as one', async () => {
    const heard: Wake[] = [];
    const listener = listenForWakes(handle.db, (wake) => heard.push(wake));
    const sender = wakeSender(handle.db, 200);
    try {
      // The listener is listening once a wake sent now arrives.
      await waitUntil(async () => {
        sender.send('jobs');
        return heard.includes('jobs');
      });
      // Each kind has its own window: the burst of events is not held back by the jobs' wakes.
      for (let i = 0; i < 50; i++) sender.send('events');
      await waitUntil(() => heard.includes('events'));
      // The 50 writes of one window, told as one at its end.
      expect(heard.filter((w) => w === 'events')).toHaveLength(1);
    } finally {
      sender.stop();
      await listener.stop();
    }
  });

  it('says whether it listens: not while its session is lost, again once it listens on a new one', async () => {
    const heard: Wake[] = [];
    const listener = listenForWakes(handle.db, (wake) => heard.push(wake), { retryMs: 50 });
    const sender = wakeSender(handle.db, 10);
    try {
      await waitUntil(() => listener.listening());
      const sessions = async () =>
        (
          await queryRows<{ pid: number }>(
            handle.db,
            sql`select pid from pg_stat_activity where query = 'listen gateway_wake' and datname = current_database()`,
          )
        ).map((row) => row.pid);
      const [pid] = await sessions();
      expect(pid).toBeDefined();
      await queryRows(handle.db, sql`select pg_terminate_backend(${pid}::int)`);
      // The loss is seen (the session's end).
      await waitUntil(() => !listener.listening());
      // Listening again on a new session: every kind is woken, as wakes sent meanwhile were lost.
      await waitUntil(() => listener.listening());
      expect((await sessions()).filter((p) => p !== pid)).toHaveLength(1);
      expect(heard).toEqual(expect.arrayContaining(['events', 'jobs']));
      heard.length = 0;
      await waitUntil(async () => {
        sender.send('jobs');
        return heard.includes('jobs');
      });
    } finally {
      sender.stop();
      await listener.stop();
    }
    expect(listener.listening()).toBe(false);
  });

  it("has another instance's workers read a test clock this one attached at once, not at their next round", async () => {
    const here = await createTestServices(handle.db);
    const there = await createTestServices(handle.db);
    // The other instance reads the clocks again only every hour: only the wake gets the clock there.
    await there.testClocks.start(3_600_000, 3_600_000);
    const workers = startWorkers(there, pino({ level: 'silent' }));
    const announcing = announceWrites(handle.db, { events: false, testClocks: here.testClocks });
    try {
      const principal = (await sandboxPrincipal(here)) as SandboxPrincipal;
      const account = { userId: principal.userId, environment: 'sandbox' } as const;
      const clock = await here.testClockService.create(principal, 'elsewhere');
      await waitUntil(() => there.testClocks.listening());
      await here.testClockService.attach(principal, clock.id);
      await waitUntil(() => there.testClocks.clockFor(account) !== there.clock);
    } finally {
      announcing();
      await workers.stop(1_000);
      there.testClocks.stop();
    }
  });

  it('wakes a relay and a job runner sleeping their longest for what a worker-less instance wrote', async () => {
    const services = await createTestServices(handle.db);
    const tenant = await seedTenant(services);
    const clock = new ManualClock(new Date('2032-01-01T00:00:00Z'));
    const kind = `k-${randomUUID()}`;
    const ran: Job[] = [];
    // Both sleep an hour once idle: only a wake gets the work done within the waits below.
    let relayAsleep = false;
    let laneAsleep = false;
    const relay = startRelay(handle.db, {
      idleMs: 3_600_000,
      idleMaxMs: 3_600_000,
      onIdle: () => {
        relayAsleep = true;
      },
    });
    const runner = new JobRunner(
      handle.db,
      clock,
      [{ kind, run: async (job) => (ran.push(job), { status: 'done' }) }],
      {
        pollMs: 3_600_000,
        idleMaxMs: 3_600_000,
        onLaneIdle: () => {
          laneAsleep = true;
        },
      },
    );
    runner.start();
    await waitUntil(() => relayAsleep && laneAsleep);
    const listener = listenForWakes(handle.db, (wake) =>
      wake === 'events' ? relay.hint() : runner.jobsWritten({ runAt: clock.now() }),
    );
    const sender = wakeSender(handle.db);
    try {
      // Written as the other instance writes, with no hint in this process.
      const [event] = await queryRows<{ id: string }>(
        handle.db,
        sql`insert into events (type, user_id, environment, data) values ('transaction.completed', ${tenant.user.id}, 'sandbox', '{}'::jsonb) returning id`,
      );
      await queryRows(
        handle.db,
        sql`insert into jobs (kind, lane, tenant, run_at) values (${kind}, 'money', '', ${clock.now().toISOString()}::timestamptz)`,
      );
      await waitUntil(
        async () => {
          sender.send('events');
          sender.send('jobs');
          const [row] = await queryRows<{ seq: unknown }>(
            handle.db,
            sql`select seq from events where id = ${event!.id}`,
          );
          return row?.seq !== null && ran.length === 1;
        },
        { intervalMs: 100 },
      );
    } finally {
      sender.stop();
      await listener.stop();
      await runner.stop(1_000);
      await relay.stop();
    }
  });
});
