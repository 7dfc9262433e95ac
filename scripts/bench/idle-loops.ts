import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { dedicatedPool } from '../../src/db/dedicated-pool.js';
import { jobsOf } from '../../src/db/pool-routing.js';
import { stampRound } from '../../src/domain/events/relay.js';
import { claimLaneJobsAndNextDue } from '../../src/domain/jobs/job-claims.js';
import { DEFAULT_LANES, type Lane } from '../../src/domain/jobs/lanes.js';
import { testClockStore } from '../../src/domain/sandbox/test-clock-store.js';
import { TEST_CLOCKS_LISTENING_REFRESH_MS, TEST_CLOCKS_REFRESH_MS } from '../../src/domain/sandbox/test-clocks.js';
import { DependencyHealth } from '../../src/health/dependency-health.js';
import { READINESS_CHECK_EVERY_MS } from '../../src/health/readiness-watch.js';
import { EMBEDDED_IDLE_MAX_MS, LISTENING_RELAY_IDLE_MAX_MS } from '../../src/workers.js';

/** One loop of an idle instance: what one of its wake-ups costs, and how many it makes a second. */
export interface LoopCost {
  loop: string;
  msPerWakeUp: number;
  wakeUpsPerSecond: number;
}

/** An idle lane's longest sleep on PostgreSQL (JobRunner's default idleMaxMs). */
const LANE_IDLE_MAX_MS = 5_000;
/** The event-loop delay sampler's wake-ups a second (metrics.ts, eventLoopMonitoringPrecision 100). */
const SAMPLER_PER_SECOND = 10;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The CPU of this process for one wake-up of each idle loop's work, in a process of its own
 * database (a new one: `url`'s server, or a new PGlite), each run `rounds` times 5 ms apart (a
 * timer's wake-up each, as at idle) after a warm-up, less an empty timer's wake-up; with the rate
 * at which an idle instance runs it (the waits as the code sets them), its share of a second.
 * PostgreSQL's own CPU for the statements is not in it (`npm run bench:idle` measures that).
 */
export async function idleLoopCosts(url: string | undefined, rounds = 200): Promise<LoopCost[]> {
  const dataDir = url ? undefined : mkdtempSync(join(tmpdir(), 'pgw-idle-loops-'));
  const name = `bench_idle_loops_${process.pid}`;
  let handle: DatabaseHandle;
  if (url) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const own = new URL(url);
    own.pathname = `/${name}`;
    handle = await openDatabase({ databaseUrl: own.toString(), migrate: true });
  } else handle = await openDatabase({ pgliteDataDir: join(dataDir!, 'db'), migrate: true });
  const { db } = handle;
  const relayConnection = dedicatedPool(db);
  const cpuOf = async (work: () => Promise<unknown>) => {
    for (let i = 0; i < 20; i++) await work();
    const before = process.cpuUsage();
    for (let i = 0; i < rounds; i++) {
      await pause(5);
      await work();
    }
    const spent = process.cpuUsage(before);
    return (spent.user + spent.system) / 1000 / rounds;
  };
  try {
    // An empty timer's wake-up, subtracted from each: the lowest of three readings (the first ones
    // still pay for the migration's garbage and the code's first compilation).
    const empty = () => cpuOf(async () => undefined);
    const timer = Math.min(await empty(), await empty(), await empty());
    const net = async (work: () => Promise<unknown>) => Math.max(0, (await cpuOf(work)) - timer);
    const jobs = jobsOf(db);
    const claim = (lane: Lane) => () =>
      claimLaneJobsAndNextDue(jobs, {
        lane,
        kinds: ['webhook.deliver'],
        limit: DEFAULT_LANES[lane].concurrency,
        perTenant: DEFAULT_LANES[lane].perTenant,
        perKey: DEFAULT_LANES[lane].perKey,
        runningPerTenant: new Map(),
        runningPerKey: new Map(),
        running: [],
        workerId: 'bench',
        leaseToken: '00000000-0000-4000-8000-000000000000',
        now: new Date(),
        leaseUntil: new Date(Date.now() + 60_000),
      });
    const health = new DependencyHealth(db, pino({ level: 'silent' }));
    const embedded = url === undefined;
    const costs: LoopCost[] = [
      {
        loop: 'event relay, empty round',
        msPerWakeUp: await net(() => stampRound(db, { connection: relayConnection, fanOut: false })),
        wakeUpsPerSecond: 1000 / (embedded ? EMBEDDED_IDLE_MAX_MS : LISTENING_RELAY_IDLE_MAX_MS),
      },
      {
        loop: 'job lanes (4), empty claim each',
        msPerWakeUp: await net(claim('webhooks')),
        wakeUpsPerSecond: 4000 / (embedded ? EMBEDDED_IDLE_MAX_MS : LANE_IDLE_MAX_MS),
      },
      {
        loop: 'readiness check',
        msPerWakeUp: await net(() => health.checkDatabase()),
        wakeUpsPerSecond: 1000 / READINESS_CHECK_EVERY_MS,
      },
      {
        loop: 'test clocks, read again',
        msPerWakeUp: await net(() => testClockStore.attached(db)),
        wakeUpsPerSecond: embedded ? 0 : 1000 / Math.max(TEST_CLOCKS_REFRESH_MS, TEST_CLOCKS_LISTENING_REFRESH_MS),
      },
    ];
    // The sampler's own wake-up is a native timer's: an empty JS timer's is an upper bound.
    costs.push({
      loop: 'event-loop delay sampler (at most)',
      msPerWakeUp: timer,
      wakeUpsPerSecond: SAMPLER_PER_SECOND,
    });
    return costs;
  } finally {
    await relayConnection?.end().catch(() => undefined);
    await handle.close();
    if (url) {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
