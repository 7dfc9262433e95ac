import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billRecords, billSchedules } from '../../src/db/bills-schema.js';
import { jobs } from '../../src/db/schema.js';
import { testClocks } from '../../src/db/sandbox-schema.js';
import { BILL_JOBS } from '../../src/domain/bills/bills-service.js';
import { SANDBOX_BILLS } from '../../src/domain/bills/sandbox-bills-provider.js';
import { ledgerHolds } from '../../src/db/ledger-schema.js';
import { systemClock } from '../../src/domain/clock.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { placeHold } from '../../src/domain/money/holds.js';
import { openPendingTransaction } from '../../src/domain/wallet/wallet-events.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { RETRY_DELAYS_MS } from '../../src/domain/webhooks/webhook.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { DEPOSIT_JOBS } from '../../src/domain/wallet/deposit-service.js';
import { tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { QUOTE_TTL_SECONDS } from '../../src/domain/solana/swap-quote.js';
import { SANDBOX_STEP_SECONDS } from '../../src/domain/offramp/offramp-service.js';
import { SANDBOX_OFFRAMP } from '../../src/domain/offramp/sandbox-offramp-provider.js';
import { jobHandlersOf } from '../../src/workers.js';
import {
  createTestServices,
  graphql,
  seedTenant,
  type StartedTestApp,
  startTestApp,
  type Tenant,
} from '../helpers/app.js';
import { principalOf } from '../helpers/principal.js';
import { Receiver } from '../helpers/receiver.js';
import { rest } from '../helpers/rest.js';

const CLOCKS = '/api/v1/sandbox/test-clocks';
/** The GraphQL examples of docs/sandbox.md's "Test clocks", in the order a reader runs them. */
const DOC_EXAMPLES = (() => {
  const page = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'sandbox.md'), 'utf8');
  const section = page.slice(page.indexOf('## Test clocks'), page.indexOf('\n## ', page.indexOf('## Test clocks') + 1));
  return [...section.matchAll(/```graphql\n([\s\S]*?)```/g)].map(([, block]) => block!);
})();
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const SOL_MINT = 'So11111111111111111111111111111111111111112';

describe('sandbox test clocks', () => {
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    // A database of its own: the runner below runs every due job it finds.
    s = await startTestApp({ isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    // The workers as a server runs them: every handler, a job of a clock read on the clock's latest time.
    runner = new JobRunner(s.t.services.db, systemClock, jobHandlersOf(s.t.services), {
      pollMs: 20,
      idleMaxMs: 250,
      beforeClockedJob: (id) => s.t.services.testClocks.reload(id),
    });
    runner.start();
  });
  afterAll(async () => {
    await runner.stop();
    await s.t.close();
  });

  /** A clock created and attached to the tenant's sandbox account over REST; its id. */
  async function attachedClock(tenant: Tenant): Promise<string> {
    const created = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', CLOCKS, { name: 'schedules' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    const attached = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', `${CLOCKS}/${id}/attach`);
    expect(attached.statusCode, attached.body).toBe(200);
    expect(attached.json().data).toMatchObject({ id, attached: true, status: 'READY', offsetSeconds: 0 });
    return id;
  }

  /** The job of `kind` whose payload names `id` under `field`. */
  const jobNaming = async (kind: string, field: string, id: string) =>
    (
      await s.t.services.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, kind), sql`${jobs.payload}->>${field} = ${id}`))
    )[0]!;

  const advance = (tenant: Tenant, id: string, seconds: number) =>
    rest(s.t, tenant.keys.TRANSACTIONS)('POST', `${CLOCKS}/${id}/advance`, { seconds });

  /** A funded tenant with a daily airtime schedule whose first run is an hour from now on its own clock. */
  async function dailySchedule(tenant: Tenant) {
    const principal = principalOf(tenant.user.id);
    await s.t.services.deposits.simulateVirtualAccountTransfer(principal, 1000);
    const firstAt = new Date(s.t.services.bills.clockOf(principal).now().getTime() + HOUR_MS);
    const record = await s.t.services.bills.pay(
      principal,
      {
        type: 'AIRTIME',
        biller: 'MTN',
        customer: '08031234567',
        amount: 100,
        isSchedule: true,
        scheduleData: { executionDate: firstAt.toISOString(), isRecurring: true, recurrencePattern: 'daily' },
      },
      undefined,
    );
    return { firstAt, scheduleId: record.scheduleId! };
  }

  const scheduleOf = async (id: string) =>
    (await s.t.services.db.select().from(billSchedules).where(eq(billSchedules.id, id)))[0]!;
  const paidBills = (tenant: Tenant) =>
    s.t.services.db
      .select()
      .from(billRecords)
      .where(and(eq(billRecords.userId, tenant.user.id), eq(billRecords.status, 'SUCCESS')));

  it("advanced 1 day, runs a daily bill schedule once, on the clock's time, and leaves another account's schedule alone", async () => {
    const clocked = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const id = await attachedClock(clocked);
    const mine = await dailySchedule(clocked);
    const theirs = await dailySchedule(other);

    const before = Date.now();
    const response = await advance(clocked, id, 86_400);
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json().data;
    expect(answer).toMatchObject({ jobsStillDue: 0, clock: { id, attached: true, status: 'READY' } });
    // The clock stands a day past where it was when asked (it runs on with the wall clock since).
    expect(new Date(answer.clock.now).getTime()).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(new Date(answer.clock.now).getTime()).toBeLessThan(Date.now() + DAY_MS + 1000);

    // Run once: paid, counted, and the next run a day after the first, still ahead on the clock.
    const schedule = await scheduleOf(mine.scheduleId);
    expect(schedule).toMatchObject({ status: 'active', runCount: 1 });
    expect(schedule.nextRunAt!.getTime()).toBe(mine.firstAt.getTime() + DAY_MS);
    const paid = await paidBills(clocked);
    expect(paid).toHaveLength(1);
    // The bill was paid at its time on the clock, an hour after it was scheduled.
    expect(paid[0]!.updatedAt.getTime()).toBeGreaterThanOrEqual(mine.firstAt.getTime());
    const [next] = await s.t.services.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, BILL_JOBS.scheduleRun), eq(jobs.status, 'pending'), eq(jobs.testClockId, id)));
    // Stored in wall time: the second run is 25 h after the first was made, less the day advanced.
    expect(next!.runAt.getTime()).toBeGreaterThan(Date.now());
    expect(next!.runAt.getTime()).toBeLessThan(Date.now() + 2 * HOUR_MS);

    // The other account is on the wall clock: its first run is still an hour away, nothing paid.
    expect(await scheduleOf(theirs.scheduleId)).toMatchObject({ status: 'active', runCount: 0 });
    expect(await paidBills(other)).toHaveLength(0);
    const [waiting] = await s.t.services.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, BILL_JOBS.scheduleRun), eq(jobs.status, 'pending'), eq(jobs.tenant, other.user.id)));
    expect(waiting!.runAt.getTime()).toBe(theirs.firstAt.getTime());
    expect(waiting!.testClockId).toBeNull();

    // A second day on the clock: the second run, once.
    const again = await advance(clocked, id, 86_400);
    expect(again.statusCode, again.body).toBe(200);
    expect(await scheduleOf(mine.scheduleId)).toMatchObject({ runCount: 2 });
    expect(await paidBills(clocked)).toHaveLength(2);
    expect(await scheduleOf(theirs.scheduleId)).toMatchObject({ runCount: 0 });
  });

  it('advanced 2 h, walks a failing webhook through its first three retries and no further', async () => {
    const tenant = await seedTenant(s.t.services);
    const id = await attachedClock(tenant);
    const receiver = await new Receiver().start();
    receiver.answer = () => 500;
    try {
      const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/webhooks', {
        url: receiver.url,
        eventTypes: ['*'],
      });
      expect(created.statusCode, created.body).toBe(201);
      const endpointId = created.json().data.endpoint.id as string;
      const sent = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', `/api/v1/webhooks/${endpointId}/test`);
      expect(sent.statusCode, sent.body).toBe(202);
      // The first attempt, on the wall clock as every delivery's: it fails, the first retry is a minute away.
      await receiver.waitFor(1);

      const response = await advance(tenant, id, 2 * 3600);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().data).toMatchObject({ jobsStillDue: 0 });
      // 1 min, then 5 min, then 30 min after each failure: three retries within 2 h; the fourth
      // is 2 h after the third (2 h 36 min in all), still ahead.
      expect(receiver.received).toHaveLength(4);
      const deliveries = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)(
        'GET',
        `/api/v1/webhooks/${endpointId}/deliveries`,
      );
      expect(deliveries.statusCode, deliveries.body).toBe(200);
      const [delivery] = deliveries.json().data;
      expect(delivery).toMatchObject({ status: 'pending', attemptCount: 4 });
      // The same event each time.
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(RETRY_DELAYS_MS.slice(0, 3).reduce((a, b) => a + b)).toBeLessThan(2 * HOUR_MS);
      expect(RETRY_DELAYS_MS.slice(0, 4).reduce((a, b) => a + b)).toBeGreaterThan(2 * HOUR_MS);

      // One more hour reaches the fourth retry.
      const more = await advance(tenant, id, 3600);
      expect(more.statusCode, more.body).toBe(200);
      expect(receiver.received).toHaveLength(5);
    } finally {
      await receiver.stop();
    }
  });

  /** A funded account's pending withdrawal paid for by a hold that expires `inMs` from now on the account's clock. */
  async function expiringHold(tenant: Tenant, inMs: number) {
    const principal = principalOf(tenant.user.id);
    await s.t.services.deposits.simulateVirtualAccountTransfer(principal, 1000);
    const clock = s.t.services.testClocks.clockFor(principal);
    const now = clock.now();
    return s.t.services.db.transaction(async (tx) => {
      const pending = await openPendingTransaction(
        tx,
        principal,
        {
          type: 'WITHDRAWAL',
          amount: 40_000n,
          reference: `HOLD-${crypto.randomUUID()}`,
          description: null,
          counterparty: {},
        },
        now,
      );
      const holdId = await placeHold(tx, {
        environment: 'sandbox',
        userId: tenant.user.id,
        amount: 40_000n,
        reference: pending.reference,
        expiresAt: new Date(now.getTime() + inMs),
        transactionId: pending.id,
        clock,
      });
      return { holdId, transactionId: pending.id };
    });
  }
  const holdStatus = async (holdId: string) =>
    (await s.t.services.db.select().from(ledgerHolds).where(eq(ledgerHolds.id, holdId)))[0]!.status;

  it("expires a clocked account's hold when the clock passes its expiry, not before; another account's stays held", async () => {
    const clocked = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const id = await attachedClock(clocked);
    const mine = await expiringHold(clocked, HOUR_MS);
    const theirs = await expiringHold(other, HOUR_MS);

    // Half an hour on the clock: not yet.
    expect((await advance(clocked, id, 1800)).json().data).toMatchObject({ jobsStillDue: 0 });
    expect(await holdStatus(mine.holdId)).toBe('held');
    // Past the hour: released, its withdrawal failed, the money back in the wallet.
    const past = (await advance(clocked, id, 1860)).json().data;
    expect(past).toMatchObject({ jobsStillDue: 0 });
    expect(past.jobsRun).toBeGreaterThanOrEqual(1);
    expect(await holdStatus(mine.holdId)).toBe('released');
    expect(await ledger.balances(s.t.services.db, 'sandbox', clocked.user.id)).toMatchObject({ held: 0n });
    const failed = await s.t.services.wallet.transaction(principalOf(clocked.user.id), mine.transactionId);
    expect(failed.status).toBe('FAILED');
    // The other account is on the wall clock: its hour has not passed.
    expect(await holdStatus(theirs.holdId)).toBe('held');
    expect(await ledger.balances(s.t.services.db, 'sandbox', other.user.id)).toMatchObject({ held: 40_000n });
  });

  it("expires a clocked account's unpaid bank-transfer deposit when the clock passes its expiry, not before; another account's stays pending", async () => {
    const clocked = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const id = await attachedClock(clocked);
    // ₦666.00 never arrives in the sandbox; the transfer account expires after 30 minutes.
    const naira = Number(SANDBOX_PAYMENTS.neverArrivesKobo) / 100;
    const open = (tenant: Tenant) =>
      s.t.services.deposits.bankTransfer(principalOf(tenant.user.id), { amount: naira, narration: 'clock' }, undefined);
    // Moved on the clock first, so a deposit whose expiry were read in wall time would show it.
    expect((await advance(clocked, id, 3600)).statusCode).toBe(200);
    const mine = await open(clocked);
    const theirs = await open(other);
    const clockNow = s.t.services.testClocks.clockFor(principalOf(clocked.user.id)).now().getTime();
    const expiry = SANDBOX_PAYMENTS.transferAccountMinutes * 60_000;
    expect(mine).toMatchObject({ status: 'pending' });
    // Its expiry is on the clock: 30 minutes after the clock's now.
    expect(Math.abs(new Date(mine.expiresAt!).getTime() - (clockNow + expiry))).toBeLessThan(60_000);

    // Each deposit's reconcile job (its look for a lost second commit, a lease and 30 s on) is its
    // account's: the clocked one's is the clock's, and runs as the clock passes it.
    const reconcileJob = (depositId: string) => jobNaming(DEPOSIT_JOBS.reconcile, 'depositId', depositId);
    expect(await reconcileJob(mine.id)).toMatchObject({ status: 'pending', testClockId: id });
    expect(await reconcileJob(theirs.id)).toMatchObject({ status: 'pending', testClockId: null });

    expect((await advance(clocked, id, expiry / 1000 - 300)).json().data).toMatchObject({ jobsStillDue: 0 });
    expect((await s.t.services.deposits.byId(mine.id))?.status).toBe('pending');
    expect((await reconcileJob(mine.id)).status).toBe('done');
    expect((await reconcileJob(theirs.id)).status).toBe('pending');
    expect((await advance(clocked, id, 600)).json().data).toMatchObject({ jobsStillDue: 0 });
    expect((await s.t.services.deposits.byId(mine.id))?.status).toBe('failed');
    expect((await s.t.services.deposits.byId(theirs.id))?.status).toBe('pending');
  });

  it("polls a clocked account's pending bill on the clock: its one-statement write's poll is the clock's job; another account's waits", async () => {
    const clocked = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const id = await attachedClock(clocked);
    // Moved on the clock first, so a poll written in wall time would show it.
    expect((await advance(clocked, id, 3600)).statusCode).toBe(200);
    const pay = async (tenant: Tenant) => {
      const principal = principalOf(tenant.user.id);
      await s.t.services.deposits.simulateVirtualAccountTransfer(principal, 1000);
      // No beneficiary saved: the one-statement open (bill-writes.ts). The provider answers PENDING.
      const record = await s.t.services.bills.pay(
        principal,
        { type: 'AIRTIME', biller: 'MTN', customer: SANDBOX_BILLS.delayedCustomer, amount: 100 },
        undefined,
      );
      expect(record.status).toBe('PENDING');
      return record;
    };
    const mine = await pay(clocked);
    const theirs = await pay(other);
    const pollJob = (recordId: string) => jobNaming(BILL_JOBS.statusPoll, 'recordId', recordId);
    expect(await pollJob(mine.id)).toMatchObject({ status: 'pending', testClockId: id });
    expect(await pollJob(theirs.id)).toMatchObject({ status: 'pending', testClockId: null });

    // Three minutes on the clock: past the poll's two, which runs and finds the payment done.
    expect((await advance(clocked, id, 180)).json().data).toMatchObject({ jobsStillDue: 0 });
    expect((await pollJob(mine.id)).status).toBe('done');
    expect((await s.t.services.bills.byId(mine.id)).status).toBe('SUCCESS');
    expect((await pollJob(theirs.id)).status).toBe('pending');
  });

  it("expires a clocked account's swap quote when the clock passes its 30 s, not before; another account's quote still swaps", async () => {
    const clocked = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const id = await attachedClock(clocked);
    const usdc = tokenBySymbol('USDC')!.address;
    const quoteFor = async (tenant: Tenant) => {
      const principal = principalOf(tenant.user.id);
      return s.t.services.solanaExchange.quote(principal, {
        inputMint: SOL_MINT,
        outputMint: usdc,
        amount: '0.01',
        network: 'testnet',
      });
    };
    const swap = (tenant: Tenant, quoteId: string) =>
      s.t.services.solanaExchange.swap(principalOf(tenant.user.id), { quoteId }, undefined);
    for (const tenant of [clocked, other])
      await s.t.services.sandboxFaucet.fund(principalOf(tenant.user.id), {
        network: 'testnet',
        asset: 'SOL',
        amount: '1',
      });
    const early = await quoteFor(clocked);
    const late = await quoteFor(clocked);
    expect(late.expiresIn).toBe(QUOTE_TTL_SECONDS);

    // Two thirds of its life on the clock: still good.
    expect((await advance(clocked, id, 20)).statusCode).toBe(200);
    expect((await swap(clocked, early.quoteId)).status).toBe('confirmed');
    // Past it: refused.
    expect((await advance(clocked, id, QUOTE_TTL_SECONDS - 20 + 1)).statusCode).toBe(200);
    await expect(swap(clocked, late.quoteId)).rejects.toMatchObject({ code: 'QUOTE_EXPIRED' });
    // The other account's time is the wall's, not the clock's 31 s ahead: its quote expires 30 s
    // after now in wall time, and swaps. (Asked now, so how long the advances took on a loaded
    // machine does not matter.)
    const asked = Math.floor(Date.now() / 1000);
    const theirs = await quoteFor(other);
    const answered = Math.ceil(Date.now() / 1000);
    expect(theirs.expiryTimestamp).toBeGreaterThanOrEqual(asked + QUOTE_TTL_SECONDS);
    expect(theirs.expiryTimestamp).toBeLessThanOrEqual(answered + QUOTE_TTL_SECONDS);
    expect((await swap(other, theirs.quoteId)).status).toBe('confirmed');
  });

  /** A 10 USDC (Base) sandbox offramp order to NGN. */
  const offrampOrder = (tenant: Tenant, reference: string) =>
    s.t.services.offramp.initiate(
      principalOf(tenant.user.id),
      {
        token: 'USDC',
        network: 'base',
        amount: '10',
        fiat: 'NGN',
        reference,
        recipient: { institution: 'GTBINGLA', accountNumber: '0123456789', accountName: 'Clock', memo: 'clock' },
      },
      undefined,
    );
  const orderStatus = async (id: string) => (await s.t.services.offramp.findOrder(id))?.status;

  it("walks a clocked account's offramp orders on the clock: an unpaid one expires past its window, not before, a paid one steps to completed; another account's waits", async () => {
    const clocked = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const id = await attachedClock(clocked);
    expect((await advance(clocked, id, 3600)).statusCode).toBe(200);
    const unpaid = await offrampOrder(clocked, `clk-unpaid-${crypto.randomUUID()}`);
    const paid = await offrampOrder(clocked, `clk-paid-${crypto.randomUUID()}`);
    const theirs = await offrampOrder(other, `clk-theirs-${crypto.randomUUID()}`);
    const window = SANDBOX_OFFRAMP.validityMinutes * 60_000;
    const clockNow = s.t.services.testClocks.clockFor(principalOf(clocked.user.id)).now().getTime();
    // Its window is on the clock.
    expect(Math.abs(new Date(unpaid.validUntil).getTime() - (clockNow + window))).toBeLessThan(60_000);

    // The deposit arrives; the sandbox takes its three steps 5 s apart on the clock (each timed
    // from when the last ran, so a step's slack is allowed for): 20 s on the clock completes it.
    await s.t.services.offramp.simulateDeposit(principalOf(clocked.user.id), paid.reference);
    expect((await advance(clocked, id, 4 * SANDBOX_STEP_SECONDS)).json().data).toMatchObject({ jobsStillDue: 0 });
    expect(await orderStatus(paid.id)).toBe('completed');

    expect((await advance(clocked, id, window / 1000 - 300)).statusCode).toBe(200);
    expect(await orderStatus(unpaid.id)).toBe('initiated');
    expect((await advance(clocked, id, 600)).json().data).toMatchObject({ jobsStillDue: 0 });
    expect(await orderStatus(unpaid.id)).toBe('expired');
    expect(await orderStatus(theirs.id)).toBe('initiated');
  });

  it('refuses a production key, over REST and GraphQL, to create, read or advance a clock', async () => {
    const tenant = await seedTenant(s.t.services);
    const id = await attachedClock(tenant);
    const production = rest(s.t, tenant.productionKey);
    const refusals = [
      await production('POST', CLOCKS, { name: 'live' }),
      await production('GET', CLOCKS),
      await production('GET', `${CLOCKS}/${id}`),
      await production('POST', `${CLOCKS}/${id}/attach`),
      await production('POST', `${CLOCKS}/${id}/advance`, { seconds: 3600 }),
      await production('DELETE', `${CLOCKS}/${id}`),
    ];
    for (const refused of refusals) {
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().message).toMatch(/Test clocks exist in the sandbox only: this is a production key/);
    }
    for (const document of [
      'mutation { createTestClock(name: "live") { id } }',
      '{ testClocks { id } }',
      `mutation { advanceTestClock(id: "${id}", seconds: 3600) { jobsRun } }`,
    ]) {
      const { body } = await graphql(s.t.app, tenant.productionKey, document);
      expect(body.errors?.[0]?.extensions['code'], document).toBe('FORBIDDEN');
    }
    // Nothing was created or moved.
    const rows = await s.t.services.db.select().from(testClocks).where(eq(testClocks.userId, tenant.user.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, offsetMs: 0, environment: 'sandbox' });
    // And production time is the wall clock's, whatever the sandbox account's clock says.
    expect(s.t.services.testClocks.clockFor({ userId: tenant.user.id, environment: 'production' })).toBe(systemClock);
    expect(s.t.services.testClocks.clockFor({ userId: tenant.user.id, environment: 'sandbox' })).not.toBe(systemClock);
  });

  it('runs the example of docs/sandbox.md as written: create, attach, advance a day', async () => {
    const tenant = await seedTenant(s.t.services);
    expect(DOC_EXAMPLES).toHaveLength(3);
    const [create, attach, advanceADay] = DOC_EXAMPLES as [string, string, string];
    const made = await graphql(s.t.app, tenant.keys.TRANSACTIONS, create);
    expect(made.body.errors).toBeUndefined();
    const id = made.body.data!.createTestClock.id as string;
    expect(made.body.data!.createTestClock).toMatchObject({ attached: false });
    const attached = await graphql(s.t.app, tenant.keys.TRANSACTIONS, attach, { id });
    expect(attached.body.data!.attachTestClock).toEqual({ id, attached: true, offsetSeconds: 0 });
    const before = Date.now();
    const advanced = await graphql(s.t.app, tenant.keys.TRANSACTIONS, advanceADay, { id });
    expect(advanced.body.errors).toBeUndefined();
    const answer = advanced.body.data!.advanceTestClock;
    expect(answer).toMatchObject({ steps: 0, jobsRun: 0, jobsStillDue: 0, clock: { status: 'READY' } });
    expect(new Date(answer.clock.now).getTime()).toBeGreaterThanOrEqual(before + DAY_MS);
  });

  it('is read by another instance when it loads, and again before a job of the clock runs there', async () => {
    const tenant = await seedTenant(s.t.services);
    const account = { userId: tenant.user.id, environment: 'sandbox' } as const;
    // A second instance over the same database, which has not read the clocks yet.
    const elsewhere = (await createTestServices(s.t.services.db)).testClocks;
    const id = await attachedClock(tenant);
    expect(elsewhere.clockFor(account)).toBe(systemClock);
    await elsewhere.load();
    const offsetThere = () => elsewhere.clockFor(account).now().getTime() - Date.now();
    expect(Math.abs(offsetThere())).toBeLessThan(1000);
    expect((await advance(tenant, id, 3600)).statusCode).toBe(200);
    // Until it reads the clock again, the other instance still has the time before the advance:
    // what its runner does before a job of the clock (JobRunnerOptions.beforeClockedJob).
    expect(Math.abs(offsetThere())).toBeLessThan(1000);
    await elsewhere.reload(id);
    expect(offsetThere()).toBeGreaterThan(3_598_000);
    await rest(s.t, tenant.keys.TRANSACTIONS)('POST', `${CLOCKS}/${id}/detach`);
    await elsewhere.reload(id);
    expect(elsewhere.clockFor(account)).toBe(systemClock);
  });

  it('takes a sandbox principal only: the compiler refuses a principal of either environment', () => {
    const service = s.t.services.testClockService;
    const production = { ...principalOf('u'), environment: 'production' as const };
    // @ts-expect-error a production principal is not a SandboxPrincipal
    const refused = () => service.list(production);
    // @ts-expect-error nor is a Principal whose environment is not known to be the sandbox
    const unknown = () => service.list(principalOf('u'));
    expect([typeof refused, typeof unknown]).toEqual(['function', 'function']);
  });

  it('refuses a second attached clock, an unattached advance and a bad number of seconds, naming the field', async () => {
    const tenant = await seedTenant(s.t.services);
    const id = await attachedClock(tenant);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const made = await call('POST', CLOCKS, {});
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().data.name).toBe('Test clock');
    const second = made.json().data.id as string;
    const attached = await call('POST', `${CLOCKS}/${second}/attach`);
    expect(attached.statusCode).toBe(409);
    expect(attached.json().message).toMatch(/Another test clock is attached/);
    const unattached = await advance(tenant, second, 60);
    expect(unattached.statusCode).toBe(409);
    for (const seconds of [0, -5, 1.5, 400 * 86_400]) {
      const bad = await advance(tenant, id, seconds);
      expect(bad.statusCode, String(seconds)).toBe(400);
      expect(bad.body).toContain('seconds');
    }
    // Detached, the account is back on the wall clock; the other clock may then be attached.
    expect((await call('POST', `${CLOCKS}/${id}/detach`)).json().data).toMatchObject({ attached: false });
    expect((await call('POST', `${CLOCKS}/${second}/attach`)).statusCode).toBe(200);
    const listed = (await call('GET', CLOCKS)).json().data as Array<{ id: string; attached: boolean }>;
    expect(listed.map((c) => [c.id, c.attached])).toEqual([
      [id, false],
      [second, true],
    ]);
    expect((await call('DELETE', `${CLOCKS}/${second}`)).statusCode).toBe(200);
    expect((await call('GET', `${CLOCKS}/${second}`)).statusCode).toBe(404);
    expect(s.t.services.testClocks.clockFor({ userId: tenant.user.id, environment: 'sandbox' })).toBe(systemClock);
  });
});
