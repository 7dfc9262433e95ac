import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { exhaustedCheckouts } from '../../src/db/pool-exhaustion.js';
import type { RoutedPool } from '../../src/db/pool-routing.js';
import { systemClock } from '../../src/domain/clock.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import type { PaymentsProvider } from '../../src/domain/payments/payments-provider.js';
import { createServices } from '../../src/services.js';
import { seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { testLogger } from '../helpers/log-file.js';
import { rest } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';
import { balanceOf, fund } from '../helpers/wallet.js';

const PAYOUTS = 200;
/** Each payout: ₦100 and the ₦25 fee. */
const AMOUNT_NAIRA = 100;
const EACH_KOBO = 10_000 + 2_500;
const FUNDED_NAIRA = 50_000;

/**
 * A slow provider never holds the database: 200 concurrent payouts on ONE API key to the sandbox
 * account that takes 3 s, with the gateway's default pools (DATABASE_POOL_SIZE 10, a checkout
 * waiting at most DATABASE_CONNECT_TIMEOUT_MS 10 s). The payout limits are the production defaults,
 * given to sandbox keys too (PAYOUT_LIMITS_SANDBOX), so the per-key limits lock is on the path,
 * with one raised to fit: at most 1,000 payouts an hour instead of 100 (per day: 500; per payout:
 * ₦5m; per day in all: ₦20m, 200 × ₦125 being ₦25,000). The sandbox's cooling-off stays off (its
 * default), as 200 payouts to one new account would pass its ₦10,000 cap.
 */
describe.skipIf(!onPostgres)('a slow provider never holds the database (PostgreSQL)', () => {
  let database: DatabaseHandle;
  let t: TestApp;
  let databaseUrl: string;
  let requestPool: pg.Pool;
  let provider: PaymentsProvider;
  let transfer: PaymentsProvider['transfer'];

  beforeAll(async () => {
    const config = loadConfig(
      {},
      {
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        SEED_DEMO: false,
        WORKERS: false,
        PAYOUT_LIMITS_SANDBOX: true,
        PAYOUT_LIMIT_HOURLY_COUNT: 1_000,
      },
    );
    databaseUrl = await isolatedTestDatabaseUrl();
    // Opened as main.ts opens it: the default pool sizes and checkout timeout.
    database = await openDatabase({
      databaseUrl,
      poolSize: config.DATABASE_POOL_SIZE,
      readPoolSize: config.DATABASE_READ_POOL_SIZE,
      jobPoolSize: config.DATABASE_JOB_POOL_SIZE,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    });
    const services = createServices(config, database.db, systemClock, () => undefined);
    const app = await buildApp({ services, logger: testLogger() });
    await app.ready();
    t = { app, services, close: async () => undefined };
    requestPool = (database.pool as RoutedPool).named().find((p) => p.name === 'request')!.pool;
    expect(config.DATABASE_POOL_SIZE).toBe(10);
    provider = services.paymentsProvider('sandbox');
    transfer = provider.transfer.bind(provider);
  });
  afterAll(async () => {
    provider.transfer = transfer;
    await t?.app.close();
    await database?.close();
  });

  /** Samples the request pool every 2 ms while `work` runs: the most in use and the most waiting. */
  async function sampled<T>(work: () => Promise<T>) {
    let inUse = 0;
    let waiting = 0;
    const timer = setInterval(() => {
      inUse = Math.max(inUse, requestPool.totalCount - requestPool.idleCount);
      waiting = Math.max(waiting, requestPool.waitingCount);
    }, 2);
    try {
      return { result: await work(), pool: { size: 10, maxInUse: inUse, maxWaiting: waiting } };
    } finally {
      clearInterval(timer);
    }
  }

  /** A fresh tenant's 200 payouts at once, on its one Transactions key, each with its own Idempotency-Key. */
  async function burst(tenant: Tenant) {
    const call = rest(t, tenant.keys.TRANSACTIONS);
    const started = Date.now();
    return Promise.all(
      Array.from({ length: PAYOUTS }, async (_, i) => {
        const response = await call(
          'POST',
          '/api/v1/wallet/withdraw',
          {
            amount: AMOUNT_NAIRA,
            bankCode: '044',
            accountNumber: SANDBOX_PAYMENTS.payouts.slowAccount,
            reference: `SLOW-${i}`,
          },
          { 'idempotency-key': `slow-${i}` },
        );
        return { status: response.statusCode, body: response.json(), ms: Date.now() - started };
      }),
    );
  }

  /** Every payout answered 201 completed, and the wallet, holds and ledger exactly as 200 payouts leave them. */
  async function expectAllPaid(tenant: Tenant, answers: Awaited<ReturnType<typeof burst>>) {
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s !== 201),
      JSON.stringify(answers.find((a) => a.status !== 201)),
    ).toEqual([]);
    expect(answers.every((a) => a.body.data.status === 'completed')).toBe(true);
    expect(new Set(answers.map((a) => a.body.data.reference)).size).toBe(PAYOUTS);
    expect(await balanceOf(t, tenant)).toMatchObject({
      availableKobo: FUNDED_NAIRA * 100 - PAYOUTS * EACH_KOBO,
      heldKobo: 0,
    });
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
  }

  it('all 200 are at the provider together, while no connection, transaction or lock is held; then all complete', async () => {
    const tenant = await seedTenant(t.services);
    await fund(t, tenant, FUNDED_NAIRA);
    // The transfers wait at the provider until all 200 are there, then go on to the sandbox's 3 s.
    // Were anything held across the call (a connection, a transaction, a row or advisory lock, a
    // pool slot), the payouts behind it could not reach the provider and this wait would fail.
    let atProvider = 0;
    let letThrough!: () => void;
    const gate = new Promise<void>((resolve) => (letThrough = resolve));
    provider.transfer = async (request) => {
      atProvider++;
      await gate;
      return transfer(request);
    };
    const checker = new pg.Client({ connectionString: databaseUrl });
    await checker.connect();
    try {
      const { result: seen, pool } = await sampled(async () => {
        const answering = burst(tenant);
        await waitUntil(() => atProvider === PAYOUTS).catch((error: unknown) => {
          throw new Error(`only ${atProvider} of ${PAYOUTS} payouts reached the provider together`, { cause: error });
        });
        // All 200 provider calls in flight: the pool has nothing checked out, and the server no
        // transaction open and no advisory lock held by any session of this database. Anything held
        // across the provider call stays held while the gate is shut, so this waits for the clean
        // state rather than reading one instant: a statement of other work that happens to be
        // running at that instant (a key's last-used touch) ends, a held connection never does.
        // What the first look saw, when it was not clean, is logged to say who it was.
        const look = async () => {
          const inUse = requestPool.totalCount - requestPool.idleCount;
          const { rows } = await checker.query<{
            open_transactions: number;
            advisory_locks: number;
            queries: string[];
          }>(
            `select
               (select count(*)::int from pg_stat_activity
                 where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null)
                 as open_transactions,
               (select count(*)::int from pg_locks l join pg_stat_activity a on a.pid = l.pid
                 where l.locktype = 'advisory' and a.datname = current_database()) as advisory_locks,
               (select coalesce(array_agg(left(query, 120)), '{}') from pg_stat_activity
                 where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle') as queries`,
          );
          const { queries, ...server } = rows[0]!;
          return { inUse, server, queries };
        };
        const first = await look();
        let last = first;
        const clean = (l: typeof first) =>
          l.inUse === 0 && l.server.open_transactions === 0 && l.server.advisory_locks === 0;
        if (!clean(first)) {
          console.log(`[slow provider] first look not clean: ${JSON.stringify(first)}`);
          await waitUntil(async () => clean((last = await look()))).catch(() => undefined);
        }
        letThrough();
        return { answers: await answering, inUse: last.inUse, server: last.server };
      });
      expect(seen.inUse).toBe(0);
      expect(seen.server).toEqual({ open_transactions: 0, advisory_locks: 0 });
      await expectAllPaid(tenant, seen.answers);
      // One wallet's payouts take turns on its rows with at most two of them in the database: the
      // pool never ran out, and no request waited for a connection.
      expect(pool.maxWaiting).toBe(0);
      expect(pool.maxInUse).toBeLessThan(pool.size);
      expect(exhaustedCheckouts(requestPool)).toBe(0);
    } finally {
      provider.transfer = transfer;
      letThrough();
      await checker.end();
    }
  });

  it('straight through the 3 s provider: all 200 answer 201 and complete, the pool never runs out (figures logged)', async () => {
    const tenant = await seedTenant(t.services);
    await fund(t, tenant, FUNDED_NAIRA);
    const { result: answers, pool } = await sampled(() => burst(tenant));
    await expectAllPaid(tenant, answers);
    expect(pool.maxWaiting).toBe(0);
    expect(pool.maxInUse).toBeLessThan(pool.size);
    expect(exhaustedCheckouts(requestPool)).toBe(0);
    // Wall time is the machine's (two shared cores): reported, not judged. The provider's 3 s is
    // the floor; the rest is the payouts' commits, which one wallet's payouts take in turns.
    const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
    console.log(
      `[slow provider figures] ${JSON.stringify({
        payouts: PAYOUTS,
        slowestMs: ms.at(-1),
        medianMs: ms[PAYOUTS >> 1],
        fastestMs: ms[0],
        pool,
      })}`,
    );
  });
});
