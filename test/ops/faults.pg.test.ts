import { sql } from 'drizzle-orm';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant, type Tenant } from '../helpers/app.js';
import { principalOf } from '../helpers/principal.js';
import type { Child } from '../helpers/child.js';
import { onPostgres } from '../helpers/database.js';
import { ThrowawayPostgres, ThrowawayRedis } from '../helpers/throwaway-servers.js';
import { waitUntil } from '../helpers/wait.js';
import {
  burstOf,
  fund,
  linesMatching,
  retryUntilLanded,
  startGateway,
  succeeded,
  type Transfer,
  tally,
  timeUntilServing,
  transfer,
} from './fault-harness.js';
import { cardDepositsUnderFault, credit, creditsUnderFault } from './credit-faults.js';
import { faultRunner, onlyRetryable503 } from './faults-scenario.js';
import {
  airtime,
  expectBillsPaidOnce,
  expectPaidOnce,
  type KeyRow,
  keyRows,
  PAID_AT_ONCE,
  PAID_SLOWLY,
  payout,
  payoutsOf,
  type TimedTransfer,
} from './held-faults.js';

const FUNDED = 10_000_000n;
/**
 * The gateway's IDEMPOTENCY_LEASE_MS: how long a request cut off keeps its key. Set apart from its
 * JOB_LEASE_MS (3 s) and the default (a minute), so a lease that ignores it shows.
 */
const LEASE_MS = 2_000;
/** What a lease may overrun the bound by: timestamps are read by the gateway, and compared here (one clock). */
const LEASE_SLACK_MS = 250;
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
    services = await createTestServices(database.db);
    gatewayEnv = {
      DATABASE_URL: postgres.url('gateway', 'gateway'),
      REDIS_URL: redis.url,
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
    };
    gateway = await startGateway(gatewayEnv);
  });

  afterAll(async () => {
    if (gateway?.child.process.exitCode === null) {
      gateway.child.process.kill('SIGKILL');
      await gateway.child.exited;
    }
    await database?.close().catch(() => undefined);
    await Promise.all([postgres?.destroy(), redis?.destroy()]);
  });

  const run = faultRunner({ services: () => services, gateway: () => gateway, funded: FUNDED });

  async function readiness() {
    const response = await fetch(`${gateway.url}/readyz`);
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  /** Every connection of the gateway's cut, three times over. */
  async function terminateGatewayBackends() {
    for (let i = 0; i < 3; i++) {
      await postgres.sql("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'gateway'");
      await sleep(150);
    }
  }

  /** The server made read-only (or writable again), returning once the gateway's readiness says so. */
  async function setReadOnly(on: boolean) {
    await postgres.sql(
      on
        ? 'alter system set default_transaction_read_only = on'
        : ['set default_transaction_read_only = off', 'alter system reset default_transaction_read_only'],
    );
    await postgres.sql('select pg_reload_conf()');
    const database = on ? 'read-only' : 'up';
    await waitUntil(async () => (await readiness()).body.database === database, { timeoutMs: 10_000, intervalMs: 50 });
  }

  it('pg_terminate_backend on every gateway connection during a burst: the process stays up, cut requests get 503, retries land exactly once', async () => {
    const logFrom = gateway.child.output().length;
    let recovery = { ms: 0, probes: 0 };
    await run({
      name: 'terminate backends',
      prefix: 'term',
      count: 300,
      concurrency: 16,
      faultAfter: 60,
      fault: async ({ payer, payee }) => {
        for (let i = 0; i < 3; i++) {
          await postgres.sql(
            "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'gateway'",
          );
          await sleep(150);
        }
        recovery = await timeUntilServing(gateway.url, payer, payee, 'term');
      },
      failures: onlyRetryable503,
      alsoLanded: () => {
        const probes = Array.from({ length: recovery.probes }, (_, i) => i);
        return probes.slice(-1).map((i) => `term-probe-${i}`);
      },
      afterLanding: () => {
        expect(linesMatching(gateway.child, logFrom, /Unhandled 'error' event|uncaughtException/)).toBe(0);
      },
      figures: ({ retried }) => ({ recoveryMs: recovery.ms, retriesMs: retried.ms }),
    });
  });

  it('PostgreSQL restarted during a burst: 503s while it is down, serving again once it returns, nothing lost or doubled', async () => {
    let recovery = { ms: 0, probes: 0 };
    let downMs = 0;
    let readyWhileDown: { status: number; body: Record<string, string> } | undefined;
    await run({
      name: 'PostgreSQL restart',
      prefix: 'restart',
      count: 300,
      concurrency: 16,
      faultAfter: 60,
      fault: async ({ payer, payee }) => {
        const stopped = Date.now();
        await postgres.stopServer('fast');
        // Readiness turns as soon as the gateway sees the database gone.
        await waitUntil(async () => (readyWhileDown = await readiness()).body.database === 'down', {
          timeoutMs: 10_000,
          intervalMs: 50,
        });
        await sleep(500);
        await postgres.startServer();
        downMs = Date.now() - stopped;
        recovery = await timeUntilServing(gateway.url, payer, payee, 'restart');
      },
      afterBurst: () => {
        expect(readyWhileDown).toMatchObject({ status: 503, body: { status: 'unavailable', database: 'down' } });
      },
      failures: onlyRetryable503,
      alsoLanded: () => [`restart-probe-${recovery.probes - 1}`],
      afterLanding: async () => {
        await waitUntil(async () => (await readiness()).status === 200, 5_000);
      },
      figures: ({ retried }) => ({
        downMs,
        recoveryMs: recovery.ms,
        retriesMs: retried.ms,
        conflicts: retried.conflicts,
      }),
    });
  });

  it('PostgreSQL made read-only and back: writes answer 503, readiness says read-only, then service returns', async () => {
    let recovery = { ms: 0, probes: 0 };
    let readyWhileReadOnly: { status: number; body: Record<string, string> } | undefined;
    // Sent while readiness says read-only: the burst's own transfers may all have answered before
    // the reload reached the backends, so this one proves a write is refused with a retryable 503.
    let writeWhileReadOnly: Transfer | undefined;
    await run({
      name: 'PostgreSQL read-only',
      prefix: 'ro',
      count: 300,
      concurrency: 16,
      faultAfter: 60,
      fault: async ({ payer, payee }) => {
        await postgres.sql('alter system set default_transaction_read_only = on');
        await postgres.sql('select pg_reload_conf()');
        await waitUntil(async () => (readyWhileReadOnly = await readiness()).body.database === 'read-only', {
          timeoutMs: 10_000,
          intervalMs: 50,
        });
        writeWhileReadOnly = await transfer(gateway.url, payer, payee, 'ro-during');
        await postgres.sql([
          'set default_transaction_read_only = off',
          'alter system reset default_transaction_read_only',
        ]);
        await postgres.sql('select pg_reload_conf()');
        recovery = await timeUntilServing(gateway.url, payer, payee, 'ro');
      },
      afterBurst: () => {
        expect(readyWhileReadOnly).toMatchObject({ status: 503, body: { database: 'read-only' } });
      },
      failures: (failed) => {
        onlyRetryable503([...failed, writeWhileReadOnly!]);
        expect(writeWhileReadOnly?.outcome).toBe(503);
      },
      alsoLanded: () => [`ro-probe-${recovery.probes - 1}`],
      afterLanding: () => {},
      figures: ({ retried }) => ({ recoveryMs: recovery.ms, retriesMs: retried.ms }),
    });
  });

  it('pg_terminate_backend during a burst of virtual-account credits: every 2xx credit is in the balance exactly once, the cut ones land on retry', async () => {
    const tenant = await seedTenant(services);
    await services.deposits.permanentAccount(principalOf(tenant.user.id));
    const figures = await creditsUnderFault(services, () => gateway.url, tenant, 'credit-term', {
      count: 200,
      concurrency: 16,
      faultAfter: 40,
      fault: terminateGatewayBackends,
    });
    console.log(`[fault figures] credits, terminate backends: ${JSON.stringify(figures)}`);
  });

  it('PostgreSQL read-only during a burst of virtual-account credits: refused ones answer 503, every 2xx credit is in the balance exactly once', async () => {
    const tenant = await seedTenant(services);
    await services.deposits.permanentAccount(principalOf(tenant.user.id));
    let duringReadOnly: Transfer | undefined;
    const figures = await creditsUnderFault(services, () => gateway.url, tenant, 'credit-ro', {
      count: 200,
      concurrency: 16,
      faultAfter: 40,
      fault: async () => {
        await setReadOnly(true);
        duringReadOnly = await credit(gateway.url, tenant, 'credit-ro-during');
        await setReadOnly(false);
      },
    });
    // Refused while read-only, and nothing recorded for it: no deposit beside the burst's.
    expect(duringReadOnly).toMatchObject({ outcome: 503, retryAfter: expect.any(String) });
    console.log(`[fault figures] credits, PostgreSQL read-only: ${JSON.stringify(figures)}`);
  });

  it('PostgreSQL restarted during a burst of virtual-account credits: every 2xx credit is in the balance exactly once, the cut ones land on retry', async () => {
    const tenant = await seedTenant(services);
    await services.deposits.permanentAccount(principalOf(tenant.user.id));
    const figures = await creditsUnderFault(services, () => gateway.url, tenant, 'credit-restart', {
      count: 200,
      concurrency: 16,
      faultAfter: 40,
      fault: async () => {
        await postgres.stopServer('fast');
        await waitUntil(async () => (await readiness()).body.database === 'down', {
          timeoutMs: 10_000,
          intervalMs: 50,
        });
        await postgres.startServer();
        await waitUntil(async () => (await readiness()).body.database === 'up', { timeoutMs: 10_000, intervalMs: 50 });
      },
    });
    console.log(`[fault figures] credits, PostgreSQL restart: ${JSON.stringify(figures)}`);
  });

  it('pg_terminate_backend during a burst of instant card deposits: every 2xx deposit is credited exactly once, the cut ones by their retry or by deposit.reconcile, none left initiated', async () => {
    const tenant = await seedTenant(services);
    const figures = await cardDepositsUnderFault(services, () => gateway.url, tenant, 'card-term', {
      count: 150,
      concurrency: 16,
      faultAfter: 30,
      fault: terminateGatewayBackends,
    });
    console.log(`[fault figures] card deposits, terminate backends: ${JSON.stringify(figures)}`);
  });

  it('PostgreSQL read-only during a burst of instant card deposits: refused ones answer 503, every 2xx deposit is credited exactly once, none left initiated', async () => {
    const tenant = await seedTenant(services);
    const figures = await cardDepositsUnderFault(services, () => gateway.url, tenant, 'card-ro', {
      count: 150,
      concurrency: 16,
      faultAfter: 30,
      fault: async () => {
        await setReadOnly(true);
        await setReadOnly(false);
      },
    });
    console.log(`[fault figures] card deposits, PostgreSQL read-only: ${JSON.stringify(figures)}`);
  });

  it('PostgreSQL read-only during a burst of payouts: a payout refused between its commits keeps its key no longer than IDEMPOTENCY_LEASE_MS; once writable the retries land, each debited exactly once', async () => {
    const tenant = await seedTenant(services);
    await fund(services, tenant, FUNDED);
    const answers: TimedTransfer[] = [];
    const send = async (key: string, accountNumber: string) => {
      const answer = await payout(gateway.url, tenant, key, accountNumber);
      answers.push(answer);
      return answer;
    };
    const slowKeys: string[] = [];
    const slow: Promise<TimedTransfer>[] = [];
    let leased: Array<KeyRow & { answeredAt: number }> = [];
    const results = await burstOf((key) => send(key, PAID_AT_ONCE), 'po-ro', {
      count: 150,
      concurrency: 8,
      faultAfter: 30,
      fault: async () => {
        // Payouts the provider takes 3 s over, one every 100 ms until the server is read-only:
        // those whose first commit lands in the last 3 s before it are still at the provider
        // then, and their second commit is refused.
        let stop = false;
        const sender = (async () => {
          while (!stop) {
            const key = `po-ro-slow-${slowKeys.length}`;
            slowKeys.push(key);
            slow.push(send(key, PAID_SLOWLY));
            await sleep(100);
          }
        })();
        const slowOpened = async () =>
          (await payoutsOf(services, tenant)).some((p) => p.reference.startsWith('po-ro-slow-'));
        try {
          await waitUntil(slowOpened, { timeoutMs: 30_000, intervalMs: 50 });
          await setReadOnly(true);
        } finally {
          stop = true;
          await sender;
        }
        await Promise.all(slow);
        // Nothing can move a key while the server is read-only: each refused request whose key
        // was left running (its first commit landed) is leased as it answered.
        const refused = answers.filter((t) => t.outcome === 503);
        const running = await keyRows(
          services,
          tenant,
          refused.map((t) => t.reference),
        );
        const rows = new Map(running.map((r) => [r.key, r]));
        leased = refused.flatMap((t) => {
          const row = rows.get(t.reference);
          return row?.status === 'running' ? [{ ...row, answeredAt: t.answeredAt }] : [];
        });
        await setReadOnly(false);
      },
    });
    const slowAnswers = await Promise.all(slow);
    const failed = [...results, ...slowAnswers].filter((t) => !succeeded(t));
    onlyRetryable503(failed);
    // At least one payout was cut between its commits (held, at the provider, its settle refused)...
    expect(leased.filter((l) => l.key.startsWith('po-ro-slow-')).length).toBeGreaterThan(0);
    // ...and none keeps its key past the configured lease after it was answered 503.
    expect(
      leased.filter((l) => l.lockedUntil === null || l.lockedUntil > l.answeredAt + LEASE_MS + LEASE_SLACK_MS),
    ).toEqual([]);
    const retried = await retryUntilLanded(
      (key) => payout(gateway.url, tenant, key, key.startsWith('po-ro-slow-') ? PAID_SLOWLY : PAID_AT_ONCE),
      failed,
    );
    await expectPaidOnce(
      services,
      tenant,
      [...[...results, ...slowAnswers].filter(succeeded), ...retried.landed],
      [...results.map((t) => t.reference), ...slowKeys],
      FUNDED,
    );
    console.log(
      `[fault figures] payouts, PostgreSQL read-only: ${JSON.stringify({
        requests: results.length + slowAnswers.length,
        failed: failed.length,
        outcomes: tally([...results, ...slowAnswers]),
        leftLeased: leased.length,
        longestLeaseAfterAnswerMs: Math.max(0, ...leased.map((l) => l.lockedUntil! - l.answeredAt)),
        retriesMs: retried.ms,
        conflicts: retried.conflicts,
      })}`,
    );
  });

  it('pg_terminate_backend during a burst of airtime purchases: every 2xx bill is paid and debited exactly once, the cut ones settled by their retry', async () => {
    const tenant = await seedTenant(services);
    await fund(services, tenant, FUNDED);
    const send = (key: string) => airtime(gateway.url, tenant, key);
    const results = await burstOf(send, 'bill-term', {
      count: 150,
      concurrency: 16,
      faultAfter: 30,
      fault: terminateGatewayBackends,
    });
    const failed = results.filter((t) => !succeeded(t));
    onlyRetryable503(failed);
    const retried = await retryUntilLanded(send, failed);
    await expectBillsPaidOnce(
      services,
      tenant,
      [...results.filter(succeeded), ...retried.landed],
      results.map((t) => t.reference),
      FUNDED,
    );
    console.log(
      `[fault figures] airtime, terminate backends: ${JSON.stringify({
        requests: results.length,
        failed: failed.length,
        outcomes: tally(results),
        retriesMs: retried.ms,
        conflicts: retried.conflicts,
      })}`,
    );
  });

  it('Redis stopped and restarted: nothing fails, limits stay per process, subscribers keep receiving by polling; one warning line and one line when it returns', async () => {
    const logFrom = gateway.child.output().length;
    const received: string[] = [];
    let payee: Tenant | undefined;
    const client = () =>
      createClient({
        url: gateway.url.replace(/^http/, 'ws') + '/graphql',
        connectionParams: { 'x-api-key': payee!.keys.READ_ONLY },
        webSocketImpl: WebSocket,
        retryAttempts: 0,
      });
    let subscriber: ReturnType<typeof client> | undefined;
    try {
      let recoveryMs = 0;
      let readyWhileDown: { status: number; body: Record<string, string> } | undefined;
      await run({
        name: 'Redis stop and restart',
        prefix: 'redis',
        count: 200,
        concurrency: 8,
        faultAfter: 40,
        beforeBurst: async (pair) => {
          payee = pair.payee;
          subscriber = client();
          const ws = subscriber;
          await new Promise<void>((resolve, reject) => {
            ws.on('connected', () => setTimeout(resolve, 300));
            ws.subscribe(
              { query: 'subscription { events(types: ["transfer.received", "transaction.completed"]) { id type } }' },
              {
                next: (value) => received.push(String((value.data as { events?: { id: string } })?.events?.id)),
                error: reject,
                complete: () => undefined,
              },
            );
          });
        },
        fault: async () => {
          await redis.stopServer();
          await waitUntil(async () => (readyWhileDown = await readiness()).body.redis === 'down', {
            timeoutMs: 10_000,
            intervalMs: 50,
          });
          const eventsBefore = received.length;
          // Events keep reaching the subscriber while Redis is away (the feed polls the table).
          await waitUntil(() => received.length > eventsBefore, 5_000);
          await redis.startServer();
          const back = Date.now();
          await waitUntil(async () => (await readiness()).body.redis === 'up', { timeoutMs: 5_000, intervalMs: 50 });
          recoveryMs = Date.now() - back;
        },
        failures: (failed) => {
          expect(failed).toEqual([]);
        },
        afterBurst: () => {
          expect(readyWhileDown).toMatchObject({
            status: 200,
            body: { status: 'degraded', redis: 'down', database: 'up' },
          });
        },
        retry: false,
        afterLanding: () => {
          expect(linesMatching(gateway.child, logFrom, /Redis is unreachable/)).toBe(1);
          expect(linesMatching(gateway.child, logFrom, /Redis is back/)).toBe(1);
          expect(linesMatching(gateway.child, logFrom, /"stack"|at Socket\./)).toBe(0);
          expect(received.length).toBeGreaterThan(0);
        },
        figures: () => ({ recoveryMs, eventsReceived: received.length }),
      });
    } finally {
      await subscriber?.dispose();
    }
  });

  it('the gateway SIGKILLed mid-burst and restarted: nothing half-written, the dead claims pass on at lease expiry, retries land exactly once', async () => {
    let killedAt = 0;
    let restartMs = 0;
    let leftRunning = { keys: 0, leaseEndsAfterDeathMs: 0 };
    await run({
      name: 'SIGKILL and restart',
      prefix: 'kill',
      count: 300,
      concurrency: 16,
      faultAfter: 60,
      survives: false,
      fault: async ({ payer }) => {
        gateway.child.process.kill('SIGKILL');
        killedAt = Date.now();
        await gateway.child.exited;
        // Claims of the dead process: nothing notices its death; its keys stay leased until locked_until.
        const [row] = await queryRows<{ keys: number; until: Date | null }>(
          services.db,
          sql`select count(*)::int as keys, max(locked_until) as until from idempotency_keys
              where user_id = ${payer.user.id} and status = 'running'`,
        );
        leftRunning = {
          keys: row?.keys ?? 0,
          leaseEndsAfterDeathMs: row?.until ? new Date(row.until).getTime() - killedAt : 0,
        };
        gateway = await startGateway(gatewayEnv);
        restartMs = Date.now() - killedAt;
      },
      failures: (failed) => {
        expect(failed.every((t) => t.outcome === 'reset' || t.outcome === 'refused')).toBe(true);
        expect(leftRunning.leaseEndsAfterDeathMs).toBeLessThanOrEqual(3_000);
      },
      figures: ({ retried }) => ({
        restartMs,
        keysLeftRunningByTheDeadProcess: leftRunning.keys,
        theirLeaseEndedAfterDeathMs: leftRunning.leaseEndsAfterDeathMs,
        conflictsWhileLeased: retried.conflicts,
        retriesMs: retried.ms,
      }),
    });
  });

  it('the gateway SIGKILLed mid-burst of virtual-account credits and restarted on the same database: every 2xx credit, before the kill or on retry, is in the balance exactly once', async () => {
    const tenant = await seedTenant(services);
    await services.deposits.permanentAccount(principalOf(tenant.user.id));
    let restartMs = 0;
    const figures = await creditsUnderFault(services, () => gateway.url, tenant, 'credit-kill', {
      count: 200,
      concurrency: 16,
      faultAfter: 40,
      fault: async () => {
        gateway.child.process.kill('SIGKILL');
        const killedAt = Date.now();
        await gateway.child.exited;
        gateway = await startGateway(gatewayEnv);
        restartMs = Date.now() - killedAt;
      },
      // Cut mid-request (its credit committed or not) or refused while no process listens.
      failures: (failed) => {
        expect(failed.filter((t) => t.outcome !== 'reset' && t.outcome !== 'refused')).toEqual([]);
      },
    });
    console.log(`[fault figures] credits, SIGKILL and restart: ${JSON.stringify({ ...figures, restartMs })}`);
  });
});
