import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { BillScheduleRunHandler, BillStatusPollHandler } from '../../src/domain/bills/bill-jobs.js';
import { billStore } from '../../src/domain/bills/bill-store.js';
import { nextRun } from '../../src/domain/bills/recurrence.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { eventsOf } from '../helpers/events.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

const HOUR = 3600_000;

describe('recurrence in Africa/Lagos', () => {
  it("keeps the Lagos wall-clock time and moves the 31st to shorter months' last day", () => {
    // 31 Jan 2027 09:00 Lagos = 08:00 UTC.
    const anchor = new Date('2027-01-31T08:00:00Z');
    const feb = nextRun(anchor, anchor, 'monthly');
    expect(feb.toISOString()).toBe('2027-02-28T08:00:00.000Z');
    const mar = nextRun(anchor, feb, 'monthly');
    expect(mar.toISOString()).toBe('2027-03-31T08:00:00.000Z');
    expect(nextRun(anchor, new Date('2027-12-31T08:00:00Z'), 'monthly').toISOString()).toBe('2028-01-31T08:00:00.000Z');
    expect(nextRun(new Date('2028-01-31T08:00:00Z'), new Date('2028-01-31T08:00:00Z'), 'monthly').toISOString()).toBe(
      '2028-02-29T08:00:00.000Z',
    );
    // 23:30 Lagos on the 31st is 22:30 UTC on the 31st: the month is Lagos's, not UTC's.
    const lateAnchor = new Date('2027-03-31T22:30:00Z');
    expect(nextRun(lateAnchor, lateAnchor, 'monthly').toISOString()).toBe('2027-04-30T22:30:00.000Z');
    expect(nextRun(anchor, anchor, 'daily').toISOString()).toBe('2027-02-01T08:00:00.000Z');
    expect(nextRun(anchor, anchor, 'weekly').toISOString()).toBe('2027-02-07T08:00:00.000Z');
  });
});

describe('scheduled bill payments', () => {
  const clock = new ManualClock(new Date('2027-01-30T12:00:00Z'));
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    runner = new JobRunner(s.t.services.db, clock, [
      new BillScheduleRunHandler(s.t.services.bills),
      new BillStatusPollHandler(s.t.services.bills),
    ]);
  });
  afterAll(() => s.t.close());

  const schedule = (tenant: Tenant, executionDate: Date, extra: object = {}) =>
    rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'MTN',
      amount: 100,
      isSchedule: true,
      scheduleData: { executionDate: executionDate.toISOString(), ...extra },
    });

  it('runs a one-off payment at its time, holding money only then, once', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const at = new Date(clock.now().getTime() + 2 * HOUR);
    const created = await schedule(tenant, at);
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({
      status: 'PENDING',
      metadata: expect.stringContaining('executionDate'),
    });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 50_000, heldKobo: 0 });
    clock.advance(HOUR);
    await runner.runDueJobs();
    expect(
      (
        await rest(s.t, tenant.keys.READ_ONLY)(
          'GET',
          `/api/v1/bills/records/reference/${created.json().data.reference}`,
        )
      ).json().data.status,
    ).toBe('PENDING');
    clock.advance(HOUR);
    await runner.runDueJobs();
    await runner.runDueJobs();
    expect(
      (
        await rest(s.t, tenant.keys.READ_ONLY)(
          'GET',
          `/api/v1/bills/records/reference/${created.json().data.reference}`,
        )
      ).json().data.status,
    ).toBe('SUCCESS');
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 40_000 });
    const listed = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/bills/schedules')).json().data;
    expect(listed).toEqual([
      expect.objectContaining({ status: 'completed', runCount: 1, recurrence: null, nextRunAt: null }),
    ]);
    // Money in naira numbers, as everywhere else in REST (stored in kobo).
    expect(listed[0].payment).toMatchObject({ amount: 100, fee: expect.any(Number) });
  });

  it("keeps a monthly schedule from the 31st running on each month's last day, survives key revocation, and stops when cancelled", async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const { key, apiKey } = await s.t.services.apiKeys.create({
      userId: tenant.user.id,
      name: 'scheduler',
      environment: 'sandbox',
      permission: 'TRANSACTIONS',
    });
    const at = new Date('2027-01-31T08:00:00Z');
    const created = await rest(s.t, key)('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'MTN',
      amount: 100,
      isSchedule: true,
      scheduleData: { executionDate: at.toISOString(), isRecurring: true, recurrencePattern: 'monthly' },
    });
    expect(created.statusCode).toBe(201);
    await s.t.services.apiKeys.revoke(tenant.user.id, apiKey.id);
    for (const when of ['2027-01-31T08:00:00Z', '2027-02-28T08:00:00Z', '2027-03-31T08:00:00Z']) {
      clock.set(new Date(when));
      await runner.runDueJobs();
    }
    const records = (
      await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/bills/records?sortOrder=ASC&sortBy=createdAt')
    ).json().data.bills;
    expect(records.map((r: { status: string }) => r.status)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    const [scheduled] = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/bills/schedules')).json().data;
    expect(scheduled).toMatchObject({
      status: 'active',
      runCount: 3,
      recurrence: 'monthly',
      nextRunAt: '2027-04-30T08:00:00.000Z',
    });
    const cancelled = await rest(s.t, tenant.keys.TRANSACTIONS)(
      'POST',
      `/api/v1/bills/schedules/${scheduled.id}/cancel`,
    );
    expect(cancelled.json().data.status).toBe('cancelled');
    clock.set(new Date('2027-04-30T09:00:00Z'));
    await runner.runDueJobs();
    expect((await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/bills/records')).json().data.total).toBe(3);
    expect(
      (await rest(s.t, tenant.keys.TRANSACTIONS)('POST', `/api/v1/bills/schedules/${scheduled.id}/cancel`)).statusCode,
    ).toBe(409);
    expect(
      (await rest(s.t, s.tenant.keys.TRANSACTIONS)('POST', `/api/v1/bills/schedules/${scheduled.id}/cancel`))
        .statusCode,
    ).toBe(404);
  });

  it('records a FAILED bill with its event when a run finds too little balance', async () => {
    const tenant = await seedTenant(s.t.services);
    clock.set(new Date('2027-06-01T10:00:00Z'));
    const created = await schedule(tenant, new Date('2027-06-01T11:00:00Z'));
    clock.set(new Date('2027-06-01T11:00:00Z'));
    await runner.runDueJobs();
    const record = (
      await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/bills/records/reference/${created.json().data.reference}`)
    ).json().data;
    expect(record).toMatchObject({ status: 'FAILED' });
    const events = await eventsOf(s.t, tenant, 'bill.', 1);
    expect(events[0]).toMatchObject({ type: 'bill.payment.failed', data: { status: 'FAILED' } });
    const viaGraphql = await graphql(s.t.app, tenant.keys.READ_ONLY, '{ billSchedules { status runCount } }');
    expect(viaGraphql.body.data!.billSchedules).toEqual([{ status: 'completed', runCount: 1 }]);
    clock.set(new Date('2027-06-02T10:00:00Z'));
    const upcoming = await graphql(
      s.t.app,
      tenant.keys.TRANSACTIONS,
      'mutation { buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 100, isSchedule: true, scheduleData: { executionDate: "2027-06-03T10:00:00Z", isRecurring: true, recurrencePattern: "weekly" } }) { status metadata } }',
    );
    const scheduleId = JSON.parse(upcoming.body.data!.buyAirtime.metadata).scheduleId;
    const cancelled = await graphql(
      s.t.app,
      tenant.keys.TRANSACTIONS,
      `mutation { cancelBillSchedule(id: "${scheduleId}") { status recurrence nextRunAt } }`,
    );
    expect(cancelled.body.data!.cancelBillSchedule).toEqual({
      status: 'cancelled',
      recurrence: 'weekly',
      nextRunAt: null,
    });
  });

  /** The owner's bill row of `reference`, as stored. */
  const billRow = async (tenant: Tenant, reference: string) =>
    (
      await queryRows<{ id: string; status: string; failure_reason: string | null; hold_id: string | null }>(
        s.t.services.db,
        sql`select id, status::text as status, failure_reason, hold_id from bill_records
            where user_id = ${tenant.user.id} and reference = ${reference}`,
      )
    )[0]!;

  it("fails a run whose reference another operation's transaction took meanwhile, naming it, and leaves that transaction alone", async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const at = new Date(clock.now().getTime() + HOUR);
    const created = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'MTN',
      amount: 100,
      reference: 'SCHED-TAKEN',
      isSchedule: true,
      scheduleData: { executionDate: at.toISOString() },
    });
    expect(created.statusCode).toBe(201);
    // Another operation's wallet transaction, still PENDING, takes the reference before the run.
    const [taken] = await queryRows<{ id: string }>(
      s.t.services.db,
      sql`insert into wallet_transactions (id, user_id, environment, type, status, amount, fee, reference, counterparty, created_at, updated_at)
          values (gen_random_uuid(), ${tenant.user.id}, 'sandbox', 'DEPOSIT', 'PENDING', 10000, 0, 'SCHED-TAKEN', '{}'::jsonb, now(), now())
          returning id`,
    );
    clock.advance(HOUR);
    await runner.runDueJobs();
    const bill = await billRow(tenant, 'SCHED-TAKEN');
    expect(bill).toMatchObject({ status: 'FAILED', hold_id: null });
    expect(bill.failure_reason).toContain(taken!.id);
    const [other] = await queryRows<{ status: string }>(
      s.t.services.db,
      sql`select status::text as status from wallet_transactions where id = ${taken!.id}`,
    );
    expect(other).toEqual({ status: 'PENDING' });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 50_000, heldKobo: 0 });
  });

  it('takes up a counted run whose hold failed, instead of leaving its bill PENDING without a hold', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const at = new Date(clock.now().getTime() + HOUR);
    const created = await schedule(tenant, at);
    expect(created.statusCode).toBe(201);
    const [scheduled] = await s.t.services.bills.schedules({ userId: tenant.user.id, environment: 'sandbox' } as never);
    // The run's first attempt counts the run, then its hold fails (a lost connection, say).
    const bills = s.t.services.bills as unknown as { holdScheduled: (...args: unknown[]) => Promise<unknown> };
    const hold = bills.holdScheduled;
    bills.holdScheduled = async () => {
      throw new Error('connection lost');
    };
    try {
      await expect(s.t.services.bills.runSchedule(scheduled!.id, 1)).rejects.toThrow('connection lost');
    } finally {
      bills.holdScheduled = hold;
    }
    expect(await billRow(tenant, created.json().data.reference)).toMatchObject({ status: 'PENDING', hold_id: null });
    // The job's retry runs the same run again.
    const retried = await s.t.services.bills.runSchedule(scheduled!.id, 1);
    expect(retried?.status).toBe('SUCCESS');
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 40_000, heldKobo: 0 });
  });

  /** Makes the bills service's private `method` throw `message` once, until `undo` is called. */
  const failOnce = (method: 'holdScheduled' | 'execute', message: string) => {
    const bills = s.t.services.bills as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const original = bills[method]!;
    bills[method] = async () => {
      bills[method] = original;
      throw new Error(message);
    };
    return () => {
      bills[method] = original;
    };
  };

  const scheduleOf = async (tenant: Tenant) =>
    (await s.t.services.bills.schedules({ userId: tenant.user.id, environment: 'sandbox' } as never))[0]!;

  it('leaves a counted run whose money is already held to its status-poll job: a retry does not call the provider again', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const created = await schedule(tenant, new Date(clock.now().getTime() + HOUR));
    const scheduled = await scheduleOf(tenant);
    // The first attempt holds the money, then dies before or during its provider call.
    const undo = failOnce('execute', 'process died');
    try {
      await expect(s.t.services.bills.runSchedule(scheduled.id, 1)).rejects.toThrow('process died');
    } finally {
      undo();
    }
    const reference = created.json().data.reference;
    expect(await billRow(tenant, reference)).toMatchObject({ status: 'PENDING', hold_id: expect.any(String) });
    const provider = (
      s.t.services.bills as unknown as { providerFor(e: string): { pay: (...a: unknown[]) => unknown } }
    ).providerFor('sandbox');
    const pay = provider.pay;
    let calls = 0;
    provider.pay = (...args: unknown[]) => {
      calls++;
      return pay.apply(provider, args);
    };
    try {
      expect(await s.t.services.bills.runSchedule(scheduled.id, 1)).toBeUndefined();
    } finally {
      provider.pay = pay;
    }
    expect(calls).toBe(0);
    expect(await billRow(tenant, reference)).toMatchObject({ status: 'PENDING', hold_id: expect.any(String) });
    expect((await balanceOf(s.t, tenant)).heldKobo).toBeGreaterThan(0);
  });

  it("skips a run whose reference a bill of the owner's own holds, without touching that bill", async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const own = await call('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'MTN',
      amount: 100,
      reference: 'WEEKLY-R2',
    });
    expect(own.json().data.status).toBe('SUCCESS');
    const created = await call('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'MTN',
      amount: 100,
      reference: 'WEEKLY',
      isSchedule: true,
      scheduleData: {
        executionDate: new Date(clock.now().getTime() + HOUR).toISOString(),
        isRecurring: true,
        recurrencePattern: 'weekly',
      },
    });
    expect(created.statusCode).toBe(201);
    const scheduled = await scheduleOf(tenant);
    expect((await s.t.services.bills.runSchedule(scheduled.id, 1))?.status).toBe('SUCCESS');
    const before = await billRow(tenant, 'WEEKLY-R2');
    expect(await s.t.services.bills.runSchedule(scheduled.id, 2)).toBeUndefined();
    expect(await billRow(tenant, 'WEEKLY-R2')).toEqual(before);
    expect((await scheduleOf(tenant)).runCount).toBe(2);
    // The skipped run is kept on the schedule, naming the bill that holds its reference.
    expect((await scheduleOf(tenant)).skippedRuns).toEqual([
      {
        run: 2,
        reference: 'WEEKLY-R2',
        reason: `The reference "WEEKLY-R2" is already held by bill ${before.id}.`,
        at: clock.now().toISOString(),
      },
    ]);
    const read = await s.t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': tenant.keys.READ_ONLY, 'content-type': 'application/json' },
      payload: { query: '{ billSchedules { runCount skippedRuns { run reference reason at } } }' },
    });
    expect(read.json()).toEqual({
      data: {
        billSchedules: [
          {
            runCount: 2,
            skippedRuns: [
              {
                run: 2,
                reference: 'WEEKLY-R2',
                reason: `The reference "WEEKLY-R2" is already held by bill ${before.id}.`,
                at: clock.now().toISOString(),
              },
            ],
          },
        ],
      },
    });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 80_000, heldKobo: 0 });
    const [listed] = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/bills/schedules')).json().data;
    expect(listed.skippedRuns).toEqual([
      {
        run: 2,
        reference: 'WEEKLY-R2',
        reason: `The reference "WEEKLY-R2" is already held by bill ${before.id}.`,
        at: clock.now().toISOString(),
      },
    ]);
    // The same run claimed again (a job run twice) neither pays nor keeps a second entry.
    expect(await s.t.services.bills.runSchedule(scheduled.id, 2)).toBeUndefined();
    expect((await scheduleOf(tenant)).skippedRuns).toHaveLength(1);
    // A run that is paid adds nothing.
    expect((await s.t.services.bills.runSchedule(scheduled.id, 3))?.status).toBe('SUCCESS');
    expect((await scheduleOf(tenant)).skippedRuns).toHaveLength(1);
  });

  it('does not take up a counted, unheld run once its schedule is cancelled', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const created = await schedule(tenant, new Date(clock.now().getTime() + HOUR), {
      isRecurring: true,
      recurrencePattern: 'weekly',
    });
    const scheduled = await scheduleOf(tenant);
    const undo = failOnce('holdScheduled', 'connection lost');
    try {
      await expect(s.t.services.bills.runSchedule(scheduled.id, 1)).rejects.toThrow('connection lost');
    } finally {
      undo();
    }
    const cancelled = await rest(s.t, tenant.keys.TRANSACTIONS)(
      'POST',
      `/api/v1/bills/schedules/${scheduled.id}/cancel`,
    );
    expect(cancelled.statusCode).toBe(200);
    expect(await s.t.services.bills.runSchedule(scheduled.id, 1)).toBeUndefined();
    expect(await billRow(tenant, created.json().data.reference)).toMatchObject({
      status: 'FAILED',
      hold_id: null,
      failure_reason: 'The schedule was cancelled before this payment ran.',
    });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 50_000, heldKobo: 0 });
  });

  it("fails the first run's record, with its event, when the schedule is cancelled before it runs", async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const created = await schedule(tenant, new Date(clock.now().getTime() + HOUR));
    const scheduled = await scheduleOf(tenant);
    const cancelled = await rest(s.t, tenant.keys.TRANSACTIONS)(
      'POST',
      `/api/v1/bills/schedules/${scheduled.id}/cancel`,
    );
    expect(cancelled.statusCode).toBe(200);
    const reference = created.json().data.reference;
    expect(await billRow(tenant, reference)).toMatchObject({ status: 'FAILED', hold_id: null });
    const failed = await eventsOf(s.t, tenant, 'bill.payment.failed', 1);
    expect(failed[0]!.data['reference']).toBe(reference);
    clock.advance(2 * HOUR);
    await runner.runDueJobs();
    expect(await billRow(tenant, reference)).toMatchObject({ status: 'FAILED', hold_id: null });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 50_000, heldKobo: 0 });
  });

  /** A promise and the function that settles it: a point a patched step waits at. */
  const gate = () => {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { opened, open };
  };

  // Real concurrent transactions: PGlite's one connection would queue the cancel behind the run's.
  it.skipIf(!onPostgres)(
    'a cancel racing a counted run: whichever takes the bill row first decides, and money moves only with a paid bill',
    async () => {
      const bills = s.t.services.bills as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const holdScheduled = bills['holdScheduled']!;
      const cancel = async (tenant: Tenant, id: string) =>
        (await rest(s.t, tenant.keys.TRANSACTIONS)('POST', `/api/v1/bills/schedules/${id}/cancel`)).statusCode;

      // The cancel first: the run, counted, waits before its hold; the cancel fails the bill; the
      // hold then finds it FAILED and holds nothing.
      const first = await seedTenant(s.t.services);
      await fund(s.t, first, 500);
      // Recurring, so that counting the run leaves the schedule active and cancellable.
      const weekly = { isRecurring: true, recurrencePattern: 'weekly' };
      const firstRef = (await schedule(first, new Date(clock.now().getTime() + HOUR), weekly)).json().data.reference;
      const beforeHold = gate();
      const reachedHold = gate();
      bills['holdScheduled'] = async (...args: unknown[]) => {
        reachedHold.open();
        await beforeHold.opened;
        return holdScheduled.apply(s.t.services.bills, args);
      };
      let run: Promise<unknown>;
      try {
        run = s.t.services.bills.runSchedule((await scheduleOf(first)).id, 1);
        await reachedHold.opened;
      } finally {
        bills['holdScheduled'] = holdScheduled;
      }
      const firstCancel = await cancel(first, (await scheduleOf(first)).id).finally(beforeHold.open);
      expect(firstCancel).toBe(200);
      expect(await run).toMatchObject({ status: 'FAILED' });
      expect(await billRow(first, firstRef)).toMatchObject({ status: 'FAILED', hold_id: null });
      expect(await balanceOf(s.t, first)).toMatchObject({ availableKobo: 50_000, heldKobo: 0 });

      // The run first: the cancel has read the bill as waiting; the run then holds the money and,
      // before it pays, the cancel's move comes: re-checked under the row lock, it finds the hold and
      // leaves the bill to be paid.
      const second = await seedTenant(s.t.services);
      await fund(s.t, second, 500);
      const secondRef = (await schedule(second, new Date(clock.now().getTime() + HOUR), weekly)).json().data.reference;
      const secondId = (await scheduleOf(second)).id;
      const store = billStore as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const unheld = store['unheldOfSchedule']!;
      const execute = bills['execute']!;
      const [read, afterRead, counted, counting, heldNow, paying] = [gate(), gate(), gate(), gate(), gate(), gate()];
      store['unheldOfSchedule'] = async (...args: unknown[]) => {
        const rows = await unheld.apply(billStore, args);
        read.open();
        await afterRead.opened;
        return rows;
      };
      bills['holdScheduled'] = async (...args: unknown[]) => {
        counted.open();
        await counting.opened;
        return holdScheduled.apply(s.t.services.bills, args);
      };
      bills['execute'] = async (...args: unknown[]) => {
        heldNow.open();
        await paying.opened;
        return execute.apply(s.t.services.bills, args);
      };
      let cancelled: Promise<number>;
      let paid: Promise<unknown>;
      try {
        paid = s.t.services.bills.runSchedule(secondId, 1);
        await counted.opened;
        cancelled = cancel(second, secondId);
        await read.opened;
        counting.open();
        await heldNow.opened;
        afterRead.open();
        expect(await cancelled).toBe(200);
        paying.open();
        expect(await paid).toMatchObject({ status: 'SUCCESS' });
      } finally {
        for (const g of [afterRead, counting, paying]) g.open();
        bills['holdScheduled'] = holdScheduled;
        bills['execute'] = execute;
        store['unheldOfSchedule'] = unheld;
      }
      expect(await cancelled).toBe(200);
      expect(await billRow(second, secondRef)).toMatchObject({ status: 'SUCCESS', hold_id: expect.any(String) });
      expect(await balanceOf(s.t, second)).toMatchObject({ availableKobo: 40_000, heldKobo: 0 });
    },
  );
});
