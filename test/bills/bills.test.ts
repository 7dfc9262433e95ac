import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BillStatusPollHandler } from '../../src/domain/bills/bill-jobs.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import type { BillsProvider } from '../../src/domain/bills/bills-provider.js';
import { BillsService } from '../../src/domain/bills/bills-service.js';
import { SANDBOX_BILLS } from '../../src/domain/bills/sandbox-bills-provider.js';
import { Idempotency } from '../../src/domain/idempotency/idempotency.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

describe('bills', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    runner = new JobRunner(s.t.services.db, clock, [new BillStatusPollHandler(s.t.services.bills)]);
  });
  afterAll(() => s.t.close());
  beforeEach(() => clock.set(new Date()));

  const read = (tenant: Tenant) => rest(s.t, tenant.keys.READ_ONLY);
  const pay = (tenant: Tenant) => rest(s.t, tenant.keys.TRANSACTIONS);

  describe('catalogue and validation', () => {
    it("lists categories, billers, items, electricity billers, DISCOs and a provider's items", async () => {
      const call = read(s.tenant);
      expect((await call('GET', '/api/v1/bills/categories')).json().data.map((c: { code: string }) => c.code)).toEqual([
        'AIRTIME',
        'MOBILEDATA',
        'CABLEBILLS',
        'UTILITYBILLS',
      ]);
      const airtime = (await call('GET', '/api/v1/bills/categories/AIRTIME/billers')).json().data;
      expect(airtime.map((b: { shortName: string }) => b.shortName)).toEqual(['MTN', 'AIRTEL', 'GLO', '9MOBILE']);
      const dstv = (await call('GET', '/api/v1/bills/billers/BIL119/items')).json().data;
      expect(dstv).toContainEqual({
        itemCode: 'CB1193',
        billerCode: 'BIL119',
        name: 'DStv Compact',
        amount: 15700,
        fee: 100,
        label: 'Smartcard Number',
        validityPeriod: '30 days',
      });
      const electricity = (await call('GET', '/api/v1/bills/electricity/billers')).json().data;
      expect(electricity).toHaveLength(22);
      const discos = (await call('GET', '/api/v1/bills/discos')).json().data;
      expect(discos.find((d: { shortName: string }) => d.shortName === 'IKEDC')).toMatchObject({
        name: 'Ikeja Electric',
        prepaid: { meterType: 'prepaid' },
        postpaid: { meterType: 'postpaid' },
      });
      expect(
        (await call('GET', '/api/v1/bills/providers/gotv/items')).json().data.map((i: { name: string }) => i.name),
      ).toEqual(['GOtv Smallie', 'GOtv Jinja', 'GOtv Max']);
      expect((await call('GET', '/api/v1/bills/categories/WATER/billers')).statusCode).toBe(400);
      expect((await call('GET', '/api/v1/bills/billers/BIL999/items')).statusCode).toBe(404);
      expect((await call('GET', '/api/v1/bills/providers/nope/items')).json().message).toContain('provider');
    });

    it('validates a customer as the seed says, naming the bad field', async () => {
      const call = read(s.tenant);
      const ok = await call('POST', '/api/v1/bills/validate', {
        customer: '45012345678',
        billerCode: 'BIL200',
        itemCode: 'UB200',
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data).toMatchObject({
        customerName: expect.any(String),
        customer: '45012345678',
        minimum: 50,
        maximum: 100_000,
      });
      for (const [body, field] of [
        [{ billerCode: 'BIL200', itemCode: 'UB200' }, 'customer'],
        [{ customer: '4501', itemCode: 'UB200' }, 'billerCode'],
        [{ customer: '4501', billerCode: 'BIL200' }, 'itemCode'],
        [{ customer: SANDBOX_BILLS.invalidCustomer, billerCode: 'BIL200', itemCode: 'UB200' }, 'customer'],
        [{ customer: '4501', billerCode: 'BIL999', itemCode: 'UB200' }, 'billerCode'],
        [{ customer: '4501', billerCode: 'BIL200', itemCode: 'XX' }, 'itemCode'],
      ] as const) {
        const response = await call('POST', '/api/v1/bills/validate', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json().message, JSON.stringify(body)).toContain(field);
      }
    });
  });

  describe('payments', () => {
    it('buys airtime by short name: holds, pays, captures; the answer is the record without updatedAt, deletedDate, providerData', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 1000);
      const response = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'mtn',
        amount: 200,
        reference: 'AIR-1',
        saveBeneficiary: true,
        beneficiaryName: 'Mum',
      });
      expect(response.statusCode).toBe(201);
      const data = response.json().data;
      expect(data).toMatchObject({
        reference: 'AIR-1',
        billerCode: 'BIL099',
        itemCode: 'AT099',
        customer: '08031234567',
        amount: 200,
        fee: 0,
        type: 'AIRTIME',
        status: 'SUCCESS',
        billerName: 'MTN Airtime',
        txRef: expect.stringMatching(/^SBX-FLYAPI-/),
        userId: tenant.user.id,
      });
      expect(Object.keys(data)).not.toEqual(expect.arrayContaining(['updatedAt']));
      expect('deletedDate' in data || 'providerData' in data).toBe(false);
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 80_000, heldKobo: 0 });
      const events = await eventsOf(s.t, tenant, 'bill.', 1);
      expect(events).toEqual([
        {
          type: 'bill.payment.successful',
          data: expect.objectContaining({
            reference: 'AIR-1',
            status: 'SUCCESS',
            amount: 200,
            currency: 'NGN',
            billerName: 'MTN Airtime',
            customerId: '08031234567',
          }),
        },
      ]);
      expect((await read(tenant)('GET', '/api/v1/bills/beneficiaries')).json().data).toEqual([
        expect.objectContaining({ name: 'Mum', billerCode: 'BIL099', customer: '08031234567' }),
      ]);
      const seedPath = await pay(tenant)('POST', '/api/v1/bills/pay/airtime', {
        phoneNumber: '08031234567',
        biller: 'BIL100',
        amount: 100,
      });
      expect(seedPath.json().data).toMatchObject({ billerName: 'Airtel Airtime', status: 'SUCCESS' });
    });

    it('buys prepaid electricity with a token and units, charging the fee on top', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 10_000);
      const response = await pay(tenant)('POST', '/api/v1/bills/pay/electricity', {
        meterNumber: '45012345678',
        amount: 5000,
        disco: 'IKEDC',
        reference: 'ELEC-1',
      });
      expect(response.json().data).toMatchObject({
        status: 'SUCCESS',
        billerName: 'Ikeja Electric Prepaid',
        amount: 5000,
        fee: 100,
        token: expect.stringMatching(/^\d{4}(-\d{4}){4}$/),
        units: '66.7 kWh',
        customerName: expect.any(String),
      });
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 1_000_000 - 510_000 });
      const postpaid = await pay(tenant)('POST', '/api/v1/bills/pay/electricity', {
        meterNumber: '45012345678',
        amount: 1000,
        disco: 'IKEDC-POSTPAID',
      });
      expect(postpaid.json().data).toMatchObject({ status: 'SUCCESS', token: null });
    });

    it("buys data and cable at the item's price", async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 30_000);
      const data = await pay(tenant)('POST', '/api/v1/bills/pay/data', {
        phoneNumber: '07031234567',
        biller: 'MTN-DATA',
        itemCode: 'MD10430',
      });
      expect(data.json().data).toMatchObject({
        type: 'MOBILEDATA',
        amount: 5500,
        validityPeriod: '30 days',
        status: 'SUCCESS',
      });
      const cable = await pay(tenant)('POST', '/api/v1/bills/pay/cable', {
        smartcardNumber: '7012345678',
        biller: 'DSTV',
        itemCode: 'CB1193',
      });
      expect(cable.json().data).toMatchObject({ type: 'CABLEBILLS', amount: 15700, fee: 100, status: 'SUCCESS' });
      expect(
        (
          await pay(tenant)('POST', '/api/v1/bills/pay/cable', {
            smartcardNumber: '7012345678',
            biller: 'DSTV',
            itemCode: 'CB1193',
            amount: 100,
          })
        ).json().message,
      ).toContain('amount');
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 3_000_000 - 550_000 - 1_580_000 });
    });

    it('refunds a failed payment exactly, and settles a timed-out one later by polling', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 1000);
      const failed = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: SANDBOX_BILLS.failingCustomer,
        biller: 'GLO',
        amount: 300,
        reference: 'AIR-FAIL',
      });
      expect(failed.json().data).toMatchObject({ status: 'FAILED' });
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 100_000, heldKobo: 0 });
      const delayed = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: SANDBOX_BILLS.delayedCustomer,
        biller: 'GLO',
        amount: 300,
        reference: 'AIR-LATE',
      });
      expect(delayed.json().data.status).toBe('PENDING');
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 70_000, heldKobo: 30_000 });
      clock.advance(3 * 60_000);
      await runner.runDueJobs();
      expect((await read(tenant)('GET', '/api/v1/bills/records/reference/AIR-LATE')).json().data.status).toBe(
        'SUCCESS',
      );
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 70_000, heldKobo: 0 });
      const events = await eventsOf(s.t, tenant, 'bill.', 2);
      expect(events.map((e) => [e.type, e.data['reference']])).toEqual([
        ['bill.payment.failed', 'AIR-FAIL'],
        ['bill.payment.successful', 'AIR-LATE'],
      ]);
      expect(await ledger.totalOf(s.t.services.db, 'sandbox')).toBe(0n);
    });

    it('sends a held bill the provider never received (the call failed before reaching it) when the poll finds it unknown, charging once', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 1000);
      const sandbox = s.t.services.billsProvider('sandbox');
      let lost = 1;
      // A provider whose first call never arrives: as if the process died between hold and call.
      const flaky: BillsProvider = Object.create(sandbox);
      flaky.pay = (input) => (lost-- > 0 ? Promise.reject(new Error('socket hang up')) : sandbox.pay(input));
      const bills = new BillsService(
        s.t.services.db,
        clock,
        new Idempotency(s.t.services.db, clock, Buffer.alloc(32, 7)),
        () => flaky,
      );
      const principal: Principal = {
        kind: 'api_key',
        credentialId: 'test',
        userId: tenant.user.id,
        environment: 'sandbox',
        abilities: new Set(['READ', 'TRANSACT']),
      };
      const record = await bills.pay(
        principal,
        { type: 'AIRTIME', biller: 'MTN', customer: '08031234567', amount: 250, reference: 'AIR-LOST' },
        undefined,
      );
      expect(record.status).toBe('PENDING');
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 75_000, heldKobo: 25_000 });
      const polled = await bills.poll(record.id);
      expect(polled.status).toBe('SUCCESS');
      expect(await bills.poll(record.id)).toMatchObject({ status: 'SUCCESS', version: polled.version });
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 75_000, heldKobo: 0 });
    });

    it('refuses too little balance and bad input on every field with 400 naming it', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 100);
      const poor = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'MTN',
        amount: 500,
      });
      expect(poor.json()).toMatchObject({ statusCode: 400, errorCode: 'INSUFFICIENT_FUNDS' });
      const airtime = { phoneNumber: '08031234567', biller: 'MTN', amount: 100 };
      const cases: Array<[string, object, string]> = [
        ['/api/v1/bills/buy-airtime', { ...airtime, phoneNumber: '12345' }, 'phoneNumber'],
        ['/api/v1/bills/buy-airtime', { ...airtime, biller: 'VODAFONE' }, 'biller'],
        ['/api/v1/bills/buy-airtime', { ...airtime, amount: -1 }, 'amount'],
        ['/api/v1/bills/buy-airtime', { ...airtime, amount: 10 }, 'amount'],
        ['/api/v1/bills/buy-airtime', { ...airtime, amount: '100' }, 'amount'],
        ['/api/v1/bills/buy-airtime', { ...airtime, amount: 100.555 }, 'amount'],
        ['/api/v1/bills/buy-airtime', { phoneNumber: '08031234567', biller: 'MTN' }, 'amount'],
        ['/api/v1/bills/buy-airtime', { ...airtime, reference: 'bad ref' }, 'reference'],
        ['/api/v1/bills/buy-airtime', { ...airtime, isSchedule: true }, 'scheduleData'],
        [
          '/api/v1/bills/buy-airtime',
          { ...airtime, isSchedule: true, scheduleData: { executionDate: 'soon' } },
          'executionDate',
        ],
        [
          '/api/v1/bills/buy-airtime',
          {
            ...airtime,
            isSchedule: true,
            scheduleData: { executionDate: new Date(Date.now() - 60_000).toISOString() },
          },
          'executionDate',
        ],
        [
          '/api/v1/bills/buy-airtime',
          {
            ...airtime,
            isSchedule: true,
            scheduleData: {
              executionDate: new Date(Date.now() + 60_000).toISOString(),
              isRecurring: true,
              recurrencePattern: 'hourly',
            },
          },
          'recurrencePattern',
        ],
        ['/api/v1/bills/buy-airtime', { ...airtime, saveBeneficiary: 'yes' }, 'saveBeneficiary'],
        [
          '/api/v1/bills/buy-airtime',
          { ...airtime, saveBeneficiary: true, beneficiaryName: 'x'.repeat(61) },
          'beneficiaryName',
        ],
        [
          '/api/v1/bills/buy-airtime',
          {
            ...airtime,
            isSchedule: true,
            scheduleData: { executionDate: new Date(Date.now() + 60_000).toISOString(), isRecurring: 'often' },
          },
          'isRecurring',
        ],
        [
          '/api/v1/bills/buy-airtime',
          { ...airtime, scheduleData: { executionDate: new Date(Date.now() + 60_000).toISOString() } },
          'isSchedule',
        ],
        ['/api/v1/bills/pay/electricity', { meterNumber: 'abc', amount: 100, disco: 'IKEDC' }, 'meterNumber'],
        ['/api/v1/bills/pay/electricity', { meterNumber: '45012345678', amount: 100, disco: 'NEPA' }, 'disco'],
        [
          '/api/v1/bills/pay/electricity',
          { meterNumber: SANDBOX_BILLS.invalidCustomer, amount: 100, disco: 'IKEDC' },
          'customer',
        ],
        ['/api/v1/bills/pay/electricity', { meterNumber: '45012345678', amount: 20, disco: 'IKEDC' }, 'amount'],
        ['/api/v1/bills/pay/data', { phoneNumber: '07031234567', biller: 'MTN-DATA', itemCode: 'NOPE' }, 'itemCode'],
        ['/api/v1/bills/pay/cable', { smartcardNumber: '1', biller: 'DSTV', itemCode: 'CB1193' }, 'smartcardNumber'],
      ];
      for (const [path, body, field] of cases) {
        const response = await pay(tenant)('POST', path, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json().message, JSON.stringify(body)).toContain(field);
      }
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 10_000, heldKobo: 0 });
      expect((await read(tenant)('POST', '/api/v1/bills/buy-airtime', airtime)).statusCode).toBe(403);
    });

    it('replays a retried Idempotency-Key and refuses a reused reference', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 1000);
      const key = { 'idempotency-key': `bill-${tenant.user.id}` };
      const body = { phoneNumber: '08031234567', biller: 'MTN', amount: 100, reference: 'AIR-IDEM' };
      const first = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', body, key);
      const again = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', body, key);
      expect(again.json().data).toEqual(first.json().data);
      expect((await pay(tenant)('POST', '/api/v1/bills/buy-airtime', { ...body, amount: 101 }, key)).statusCode).toBe(
        422,
      );
      const reused = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', body);
      expect(reused.statusCode).toBe(409);
      // The refusal names the transaction holding the reference.
      const holder = (await read(tenant)('GET', '/api/v1/transactions/reference/AIR-IDEM')).json().data;
      expect(reused.json().message).toContain(holder.id);
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 90_000 });
    });

    for (const [path, extra] of [
      ['its one-statement path', {}],
      // Saving a beneficiary opens the bill through a transaction of separate statements.
      ['its transaction path, saving a beneficiary', { saveBeneficiary: true, beneficiaryName: 'Ada' }],
    ] as const)
      it(`refuses a reference a transfer holds (${path}), naming the transfer, and holds nothing`, async () => {
        const tenant = await seedTenant(s.t.services);
        const friend = await seedTenant(s.t.services);
        await fund(s.t, tenant, 1000);
        const reference = `SHARED-${tenant.user.id}`;
        const sent = await pay(tenant)('POST', '/api/v1/wallet/transfer', {
          amount: 1,
          recipient: friend.user.id,
          reference,
        });
        expect(sent.statusCode).toBe(201);
        const body = { phoneNumber: '08031234567', biller: 'MTN', amount: 100, reference, ...extra };
        const refused = await pay(tenant)('POST', '/api/v1/bills/buy-airtime', body);
        expect(refused.statusCode).toBe(409);
        expect(refused.json().message).toContain(sent.json().data.id);
        expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 99_900, heldKobo: 0 });
      });

    it('lets one of several bills racing for one reference through, refusing the rest by name', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 1000);
      const body = { phoneNumber: '08031234567', biller: 'MTN', amount: 100, reference: 'AIR-RACE' };
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => pay(tenant)('POST', '/api/v1/bills/buy-airtime', body)),
      );
      const codes = answers.map((a) => a.statusCode).sort();
      expect(codes).toEqual([201, 409, 409, 409, 409, 409]);
      for (const refused of answers.filter((a) => a.statusCode === 409))
        expect(refused.json().message).toContain('AIR-RACE');
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 90_000, heldKobo: 0 });
    });
  });

  describe('records and receipts', () => {
    it('filters by every field alone and combined, sorts, pages, and refuses bad values', async () => {
      // The five bills are made a minute apart: at noon in Lagos, so they share one Lagos date
      // whatever time the suite runs (near midnight they fell on two, and the date filter saw four).
      const lagosNoon = new Date(`${new Date().toISOString().slice(0, 10)}T11:00:00Z`);
      clock.set(lagosNoon);
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 100_000);
      const made = [
        ['/api/v1/bills/buy-airtime', { phoneNumber: '08031234567', biller: 'MTN', amount: 100, reference: 'R-1' }],
        ['/api/v1/bills/buy-airtime', { phoneNumber: '08099999999', biller: 'AIRTEL', amount: 300, reference: 'R-2' }],
        [
          '/api/v1/bills/buy-airtime',
          { phoneNumber: SANDBOX_BILLS.failingCustomer, biller: 'GLO', amount: 200, reference: 'R-3' },
        ],
        [
          '/api/v1/bills/pay/electricity',
          { meterNumber: '45012345678', amount: 1000, disco: 'EKEDC', reference: 'R-4' },
        ],
        [
          '/api/v1/bills/pay/cable',
          { smartcardNumber: '7012345678', biller: 'GOTV', itemCode: 'CB1201', reference: 'R-5' },
        ],
      ] as const;
      for (const [path, body] of made) {
        clock.advance(60_000);
        expect((await pay(tenant)('POST', path, body)).statusCode).toBe(201);
      }
      const list = async (query: string) => {
        const response = await read(tenant)('GET', `/api/v1/bills/records${query}`);
        expect(response.statusCode, query).toBe(200);
        return response.json().data as {
          bills: Array<{ reference: string }>;
          total: number;
          page: number;
          totalPages: number;
          hasNext: boolean;
          hasPrev: boolean;
        };
      };
      const refs = async (query: string) => (await list(query)).bills.map((b) => b.reference);
      expect(await refs('')).toEqual(['R-5', 'R-4', 'R-3', 'R-2', 'R-1']);
      expect(await refs('?type=AIRTIME')).toEqual(['R-3', 'R-2', 'R-1']);
      expect(await refs('?status=FAILED')).toEqual(['R-3']);
      expect(await refs('?billerName=airtel')).toEqual(['R-2']);
      expect(await refs('?billerCode=BIL099')).toEqual(['R-1']);
      expect(await refs('?customer=45012345678')).toEqual(['R-4']);
      expect(await refs('?search=r-4')).toEqual(['R-4']);
      const txRef = (await read(tenant)('GET', '/api/v1/bills/records/reference/R-2')).json().data.txRef as string;
      expect(await refs(`?search=${txRef.slice(-6)}`)).toEqual(['R-2']);
      expect(await refs('?minAmount=250')).toEqual(['R-5', 'R-4', 'R-2']);
      expect(await refs('?maxAmount=200')).toEqual(['R-3', 'R-1']);
      expect(await refs('?sortBy=amount&sortOrder=ASC')).toEqual(['R-1', 'R-3', 'R-2', 'R-4', 'R-5']);
      expect(await refs('?sortBy=createdAt&sortOrder=ASC')).toEqual(['R-1', 'R-2', 'R-3', 'R-4', 'R-5']);
      expect((await refs('?sortBy=updatedAt&sortOrder=DESC'))[0]).toBe('R-5');
      const today = new Date(clock.now().getTime() + 3600_000).toISOString().slice(0, 10);
      expect(await refs(`?startDate=${today}&endDate=${today}`)).toHaveLength(5);
      expect(await refs('?startDate=2000-01-01&endDate=2000-01-02')).toEqual([]);
      // A date-time is accepted too, the same as on every other list: that instant.
      const hourAgo = encodeURIComponent(new Date(clock.now().getTime() - 3600_000).toISOString());
      const hourAhead = encodeURIComponent(new Date(clock.now().getTime() + 3600_000).toISOString());
      expect(await refs(`?startDate=${hourAgo}&endDate=${hourAhead}`)).toHaveLength(5);
      expect(await refs(`?endDate=${hourAgo}`)).toEqual([]);
      expect(await refs('?type=AIRTIME&status=SUCCESS&minAmount=150&sortBy=amount&sortOrder=DESC')).toEqual(['R-2']);
      const page = await list('?limit=2&page=2');
      expect(page).toMatchObject({ page: 2, total: 5, totalPages: 3, hasNext: true, hasPrev: true });
      expect(page.bills.map((b) => b.reference)).toEqual(['R-3', 'R-2']);
      expect((await list('?page=9')).bills).toEqual([]);
      const full = (await list('?search=R-1')).bills[0] as Record<string, unknown>;
      expect(full).toHaveProperty('updatedAt');
      expect(full).toHaveProperty('deletedDate', null);
      expect(full).toHaveProperty('providerData', expect.any(String));
      for (const bad of [
        '?limit=101',
        '?limit=0',
        '?page=0',
        '?type=WATER',
        '?status=DONE',
        '?sortBy=name',
        '?sortOrder=UP',
        '?startDate=01-01-2026',
        '?startDate=2026-02-30x',
        '?minAmount=-5',
        '?minAmount=500&maxAmount=100',
        '?startDate=2026-05-02&endDate=2026-05-01',
      ]) {
        const response = await read(tenant)('GET', `/api/v1/bills/records${bad}`);
        expect(response.statusCode, bad).toBe(400);
      }
    });

    it("answers a missing or another user's reference with the seed's BILL_NOT_FOUND body; receipts in JSON and printable HTML", async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 500);
      await pay(tenant)('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'MTN',
        amount: 150,
        reference: 'MINE-1',
      });
      for (const path of [
        '/api/v1/bills/records/reference/MINE-1',
        '/api/v1/bills/records/reference/MINE-1/receipt',
        '/api/v1/bills/records/reference/MINE-1/receipt.html',
      ]) {
        const other = await read(s.tenant)('GET', path);
        expect(other.statusCode, path).toBe(404);
        expect(other.json(), path).toEqual({
          success: false,
          message: expect.stringContaining('MINE-1'),
          errorCode: 'BILL_NOT_FOUND',
          reference: 'MINE-1',
        });
      }
      const missing = await read(tenant)('GET', '/api/v1/bills/records/reference/NOPE');
      expect(missing.json()).toMatchObject({ success: false, errorCode: 'BILL_NOT_FOUND', reference: 'NOPE' });
      const receipt = await read(tenant)('GET', '/api/v1/bills/records/reference/MINE-1/receipt');
      expect(receipt.json().data).toMatchObject({ reference: 'MINE-1', status: 'SUCCESS', amount: 150 });
      const page = await read(tenant)('GET', '/api/v1/bills/records/reference/MINE-1/receipt.html');
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.body).toContain('MINE-1');
      expect(page.body).toContain('NGN 150.00');
      expect(page.body).not.toContain('<script');
    });
  });

  describe('beneficiaries and GraphQL', () => {
    it('lists and deletes beneficiaries, and serves bills over GraphQL', async () => {
      const tenant = await seedTenant(s.t.services);
      await fund(s.t, tenant, 5000);
      const key = tenant.keys.FULL_ACCESS;
      const bought = await graphql(
        s.t.app,
        key,
        'mutation { buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 100, reference: "G-AIR", saveBeneficiary: true }) { reference status amount fee type billerName } }',
      );
      expect(bought.body.data!.buyAirtime).toEqual({
        reference: 'G-AIR',
        status: 'SUCCESS',
        amount: 100,
        fee: 0,
        type: 'AIRTIME',
        billerName: 'MTN Airtime',
      });
      const others = await graphql(
        s.t.app,
        key,
        `mutation { buyMobileData(input: { phoneNumber: "08031234567", biller: "MTN-DATA", itemCode: "MD1041" }) { status }
          subscribeCableTv(input: { smartcardNumber: "7012345678", biller: "STARTIMES", itemCode: "CB1231" }) { status }
          payElectricity(input: { meterNumber: "45012345678", disco: "AEDC", amount: 100 }) { status token }
          validateBillCustomer(input: { customer: "45012345678", billerCode: "BIL204", itemCode: "UB204" }) { customerName minimum } }`,
      );
      expect(others.body.errors, JSON.stringify(others.body.errors)).toBeUndefined();
      const queried = await graphql(
        s.t.app,
        key,
        `{ billCategories { code } billers(category: CABLEBILLS) { shortName } billerItems(billerCode: "BIL099") { itemCode }
           electricityBillers { billerCode } discos { shortName } providerItems(provider: "DSTV") { name }
           billRecords(filter: { type: AIRTIME }, limit: 5) { total bills { reference } }
           billRecord(reference: "G-AIR") { txRef providerData } billBeneficiaries { id customer } billSchedules { id } }`,
      );
      expect(queried.body.errors, JSON.stringify(queried.body.errors)).toBeUndefined();
      expect(queried.body.data!['billRecords']).toEqual({ total: 1, bills: [{ reference: 'G-AIR' }] });
      const beneficiaryId = queried.body.data!['billBeneficiaries'][0].id;
      const missing = await graphql(s.t.app, key, '{ billRecord(reference: "NOPE") { id } }');
      expect(missing.body.errors![0]!.extensions).toMatchObject({ code: 'BILL_NOT_FOUND', reference: 'NOPE' });
      const removed = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)(
        'DELETE',
        `/api/v1/bills/beneficiaries/${beneficiaryId}`,
      );
      expect(removed.statusCode).toBe(200);
      expect((await read(tenant)('GET', '/api/v1/bills/beneficiaries')).json().data).toEqual([]);
      expect(
        (await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('DELETE', `/api/v1/bills/beneficiaries/${beneficiaryId}`))
          .statusCode,
      ).toBe(404);
    });
  });
});
