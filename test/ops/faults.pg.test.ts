import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { createServices, type Services } from '../../src/services.js';
import { seedTenant, type Tenant } from '../helpers/app.js';
import type { Child } from '../helpers/child.js';
import { onPostgres } from '../helpers/database.js';
import { ThrowawayPostgres, ThrowawayRedis } from '../helpers/throwaway-servers.js';
import { waitUntil } from '../helpers/wait.js';
import {
  burst,
  expectExactlyOnce,
  fund,
  linesMatching,
  retryFailed,
  startGateway,
  succeeded,
  tally,
  timeUntilServing,
  type Transfer,
} from './fault-harness.js';

const FUNDED = 10_000_000n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Faults done to a PostgreSQL cluster and a redis-server of this file's own (never the machine's),
 * with a gateway process (HTTP and workers) in the middle of a burst of transfers. Each prints
 * its figures: requests failed during the fault and the time to serve again.
 */
describe.skipIf(!onPostgres)('surviving PostgreSQL, Redis and process faults (PostgreSQL)', () => {
  let postgres: ThrowawayPostgres;
  let redis: ThrowawayRedis;
  let database: DatabaseHandle;
  let services: Services;
  let gateway: { child: Child; url: string };
  let gatewayEnv: Record<string, string>;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([ThrowawayPostgres.start(), ThrowawayRedis.start()]);
    database = await openDatabase({ databaseUrl: postgres.url('gateway', 'fault-test'), poolSize: 4 });
    services = createServices(
      loadConfig({}, { NODE_ENV: 'test' }),
      database.db,
      systemClock,
      () => undefined,
      new RateLimiter(undefined),
    );
    gatewayEnv = { DATABASE_URL: postgres.url('gateway', 'gateway'), REDIS_URL: redis.url };
    gateway = await startGateway(gatewayEnv);
  }, 150_000);

  afterAll(async () => {
    if (gateway?.child.process.exitCode === null) {
      gateway.child.process.kill('SIGKILL');
      await gateway.child.exited;
    }
    await database?.close().catch(() => undefined);
    await Promise.all([postgres?.destroy(), redis?.destroy()]);
  }, 60_000);

  async function pair(): Promise<{ payer: Tenant; payee: Tenant }> {
    const payer = await seedTenant(services);
    const payee = await seedTenant(services);
    await fund(services, payer, FUNDED);
    return { payer, payee };
  }

  function report(name: string, results: Transfer[], extra: Record<string, unknown>) {
    const failed = results.filter((t) => !succeeded(t));
    console.log(`[fault figures] ${name}: ${JSON.stringify({ requests: results.length, failed: failed.length, outcomes: tally(results), ...extra })}`);
  }

  /** Failures a database fault may cause: 503 with Retry-After, nothing else (no 500, no reset). */
  function expectOnlyRetryable503(results: Transfer[]) {
    const failed = results.filter((t) => !succeeded(t));
    expect(failed.filter((t) => t.outcome !== 503 || t.retryAfter === null)).toEqual([]);
  }

  async function readiness() {
    const response = await fetch(`${gateway.url}/readyz`);
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  it('pg_terminate_backend on every gateway connection during a burst: the process stays up, cut requests get 503, retries land exactly once', async () => {
    const { payer, payee } = await pair();
    const logFrom = gateway.child.output().length;
    let recovery = { ms: 0, probes: 0 };
    const results = await burst(() => gateway.url, payer, payee, 'term', {
      count: 300,
      concurrency: 16,
      faultAfter: 60,
      fault: async () => {
        for (let i = 0; i < 3; i++) {
          await postgres.sql(
            "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'gateway'",
          );
          await sleep(150);
        }
        recovery = await timeUntilServing(gateway.url, payer, payee, 'term');
      },
    });
    expect(gateway.child.process.exitCode).toBeNull();
    expectOnlyRetryable503(results);
    const failed = results.filter((t) => !succeeded(t));
    const retried = await retryFailed(gateway.url, payer, payee, failed);
    const probes = Array.from({ length: recovery.probes }, (_, i) => i);
    await expectExactlyOnce(
      services,
      payer,
      payee,
      [...results.map((t) => t.reference), ...probes.slice(-1).map((i) => `term-probe-${i}`)],
      FUNDED,
    );
    expect(linesMatching(gateway.child, logFrom, /Unhandled 'error' event|uncaughtException/)).toBe(0);
    expect(recovery.ms).toBeLessThan(5_000);
    report('terminate backends', results, { recoveryMs: recovery.ms, retriesMs: retried.ms });
  });
});
