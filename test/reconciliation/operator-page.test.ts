import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import { eq } from 'drizzle-orm';
import { ManualClock } from '../../src/domain/clock.js';
import { RECONCILE_JOB, ReconcileHandler } from '../../src/domain/reconciliation/reconciliation-job.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { heldJob } from '../helpers/jobs.js';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';

describe('the operator reconciliation page and the daily job', () => {
  let t: TestApp;
  let off: TestApp;
  const clock = new ManualClock(new Date('2026-04-02T03:00:00.000Z'));
  beforeAll(async () => {
    // A database of its own even on PGlite: the daily run reconciles every source of the sandbox,
    // and an earlier file's sandbox swaps and transfers in a worker's shared database are not this run's.
    t = await createTestApp({ isolated: 'even-on-pglite', clock, config: { OPERATOR_TOKEN } });
    off = await createTestApp({ isolated: true });
    // Two apps on a loaded machine: start-up is the slow part.
  });
  afterAll(async () => {
    await t.close();
    await off.close();
  });

  it('answers the operator token only: not a partner key, not without a token, and is absent without OPERATOR_TOKEN', async () => {
    const tenant = await seedTenant(t.services);
    const get = (authorization?: string) =>
      t.app.inject({ method: 'GET', url: '/operator/reconciliation', headers: authorization ? { authorization } : {} });
    expect((await get()).statusCode).toBe(401);
    expect((await get(`Bearer ${tenant.keys.FULL_ACCESS}`)).statusCode).toBe(401);
    expect((await get(`Bearer ${tenant.productionKey}`)).statusCode).toBe(401);
    const page = await get(`Bearer ${OPERATOR_TOKEN}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toMatch(/<h1>Reconciliation<\/h1>/);
    const absent = await off.app.inject({
      method: 'GET',
      url: '/operator/reconciliation',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(absent.statusCode).toBe(404);
  });

  it('the daily job reconciles yesterday in the sandbox and queues the next run a day later', async () => {
    const handler = new ReconcileHandler(t.services.reconciliation, ['sandbox'], t.services.db, clock, 86_400_000);
    // The next run is one pending job per kind: a file before this one in the worker's database may
    // have scheduled it on its own clock (files of a worker run one after another: it is done).
    await t.services.db.delete(jobs).where(eq(jobs.kind, RECONCILE_JOB));
    const job = await heldJob(t.services.db, { payload: {}, tenant: '' });
    expect(await handler.run(job)).toEqual({ status: 'done' });
    // Test files in one worker share the embedded database, and other files' runs carry other
    // clocks' times: find these runs by what they are, not by being the newest.
    const daily = (await t.services.reconciliation.runs(1000)).filter(
      (r) =>
        r.trigger === 'daily' &&
        r.environment === 'sandbox' &&
        new Date(r.finishedAt).getTime() === clock.now().getTime(),
    );
    // Yesterday, and the day whose settlement window (48 hours by default) has just passed.
    expect(daily.map((r) => r.businessDate).sort()).toEqual(['2026-03-30', '2026-04-01']);
    const run = daily.find((r) => r.businessDate === '2026-04-01');
    expect(run).toMatchObject({ environment: 'sandbox', businessDate: '2026-04-01', trigger: 'daily', outcome: 'ok' });
    expect(run!.sources.map((s) => s.provider).sort()).toEqual([
      'evm-arbitrum-one-market-makers',
      'evm-base-market-makers',
      'evm-bnb-smart-chain-market-makers',
      'evm-ethereum-market-makers',
      'evm-lisk-market-makers',
      'evm-optimism-market-makers',
      'evm-polygon-market-makers',
      'evm-scroll-market-makers',
      'sandbox',
      'sandbox-bills',
      'solana-devnet-asset-ledger',
      'solana-devnet-market-makers',
      'solana-mainnet-beta-asset-ledger',
      'solana-mainnet-beta-market-makers',
      'solana-testnet-asset-ledger',
      'solana-testnet-market-makers',
    ]);
    const next = await t.services.db.select().from(jobs).where(eq(jobs.kind, RECONCILE_JOB));
    expect(next.map((j) => j.runAt.toISOString())).toContain('2026-04-03T03:00:00.000Z');

    const page = await t.app.inject({
      method: 'GET',
      url: '/operator/reconciliation',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    // The page shows the newest runs; in the worker's shared database those may be other files'.
    for (const shown of await t.services.reconciliation.runs(10)) expect(page.body).toContain(shown.businessDate);
  });
});
