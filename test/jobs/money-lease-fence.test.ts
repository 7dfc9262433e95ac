import { queryRows } from '../../src/db/client.js';
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { type Job, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { DepositSandboxArrivalHandler } from '../../src/domain/wallet/wallet-jobs.js';
import { ledgerHolds } from '../../src/db/ledger-schema.js';
import { HoldExpiryHandler, placeHold } from '../../src/domain/money/holds.js';
import { failExpiredHoldTransaction } from '../../src/domain/wallet/wallet-transitions.js';
import { openPendingTransaction } from '../../src/domain/wallet/wallet-events.js';
import { startTestApp, type StartedTestApp } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

/**
 * A money job (a sandbox deposit arriving: it credits the wallet) whose lease another worker took
 * over while it ran, e.g. after a pause past the lease. Its handler opens its transaction in the
 * deposit service, with no fence of its own: the runner fences every transaction of a handler
 * (it binds the handler's services to its claim's handle).
 */
describe('a money job that lost its lease', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  it('cannot credit the wallet; the worker that took it over credits it once', async () => {
    const reference = `DEP-fence-${randomUUID().slice(0, 8)}`;
    const started = await rest(s.t, s.tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/deposits/bank-transfer', {
      amount: 1200,
      reference,
    });
    expect(started.statusCode, started.body).toBe(201);
    clock.advance(SANDBOX_PAYMENTS.arrivalSeconds * 1000);
    const arrival = new DepositSandboxArrivalHandler(s.t.services.deposits);
    let stolen: Job | undefined;
    const takenOver = {
      kind: arrival.kind,
      // A handler reaches its services through its own properties: the runner binds them to
      // the claim's fenced handle (database-binding.ts); a closure would keep the application's.
      arrival,
      async run(job: Job) {
        // The pause: meanwhile another worker's claim replaced this one's lease token.
        await s.t.services.db.execute(sql`update jobs set lease_token = gen_random_uuid() where id = ${job.id}`);
        stolen = job;
        return this.arrival.run(job);
      },
    };
    const paused = new JobRunner(s.t.services.db, clock, [takenOver], { workerId: 'paused', leaseMs: 30_000 });
    await paused.runDueJobs();
    expect(stolen).toBeDefined();
    const deposit = async () =>
      (await rest(s.t, s.tenant.keys.READ_ONLY)('GET', `/api/v1/wallet/deposits/${reference}`)).json().data.status;
    expect(await deposit()).toBe('PENDING');
    expect(await balanceOf(s.t, s.tenant)).toMatchObject({ availableKobo: 0 });
    // The stale holder recorded nothing either: the job is still pending under the other lease.
    const [row] = await s.t.services.db.select().from(jobs).where(eq(jobs.id, stolen!.id));
    expect(row).toMatchObject({ status: 'pending', lockedBy: 'paused' });
    expect(row!.leaseToken).not.toBe(stolen!.leaseToken);

    // The lease it was given lapses; the next claim runs the credit, once.
    clock.advance(31_000);
    await new JobRunner(s.t.services.db, clock, [arrival], { workerId: 'next' }).runDueJobs();
    expect(await deposit()).toBe('COMPLETED');
    expect(await balanceOf(s.t, s.tenant)).toMatchObject({ availableKobo: 120_000 });
  });

  it("a hold's expiry run under a lease taken over releases nothing; the worker that took it releases it once", async () => {
    await fund(s.t, s.tenant, 50);
    const owner = { userId: s.tenant.user.id, environment: 'sandbox' as const };
    const expiresAt = new Date(clock.now().getTime() + 60_000);
    const holdId = await s.t.services.db.transaction(async (tx) => {
      const pending = await openPendingTransaction(
        tx,
        owner,
        { type: 'WITHDRAWAL', amount: 2_000n, reference: `HOLD-${randomUUID()}`, description: null, counterparty: {} },
        clock.now(),
      );
      return placeHold(tx, {
        ...owner,
        amount: 2_000n,
        reference: pending.reference,
        expiresAt,
        transactionId: pending.id,
      });
    });
    const available = async () => (await balanceOf(s.t, s.tenant)).availableKobo as number;
    const held = await available();
    clock.advance(61_000);
    const expiry = new HoldExpiryHandler(s.t.services.db, clock, failExpiredHoldTransaction);
    const takenOver = {
      kind: expiry.kind,
      expiry,
      async run(job: Job) {
        await s.t.services.db.execute(sql`update jobs set lease_token = gen_random_uuid() where id = ${job.id}`);
        return this.expiry.run(job);
      },
    };
    const holdStatus = async () =>
      (await s.t.services.db.select().from(ledgerHolds).where(eq(ledgerHolds.id, holdId)))[0]!.status;
    await new JobRunner(s.t.services.db, clock, [takenOver], { workerId: 'paused', leaseMs: 30_000 }).runDueJobs();
    expect(await holdStatus()).toBe('held');
    expect(await available()).toBe(held);

    clock.advance(31_000);
    await new JobRunner(s.t.services.db, clock, [expiry], { workerId: 'next' }).runDueJobs();
    expect(await holdStatus()).toBe('released');
    expect(await available()).toBe(held + 2_000);
    const releases = await queryRows(
      s.t.services.db,
      sql`select id from ledger_postings where kind = 'release' and reference = ${holdId}`,
    );
    expect(releases).toHaveLength(1);
  });
});
