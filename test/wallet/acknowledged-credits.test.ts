import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { DepositReconcileHandler } from '../../src/domain/wallet/wallet-jobs.js';
import { seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { principalOf } from '../helpers/principal.js';
import { refuseWrites } from '../helpers/refused-writes.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

/** Set apart from the default (60 s), so a lease that ignores configuration shows. */
const LEASE_MS = 7_000;
/** When `deposit.reconcile` looks at a deposit of the sandbox (which settles by itself): after the lease, plus 30 s. */
const FINISH_JOB_AFTER_MS = LEASE_MS + 30_000;

/**
 * Every path that answers after two commits, with its second commit refused as a read-only
 * database refuses it (test/helpers/refused-writes.ts): the request answers 503 and moves nothing
 * it did not record; then a retry with the same Idempotency-Key, or the job, finishes it, and the
 * balance moves exactly once. The key stays leased for IDEMPOTENCY_LEASE_MS, not a fixed minute.
 */
describe('every acknowledged credit is a credit: two-commit paths whose second commit fails', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({
      clock,
      isolated: true,
      config: { RATE_LIMIT_PER_MINUTE: 100_000, IDEMPOTENCY_LEASE_MS: LEASE_MS },
    });
    runner = new JobRunner(s.t.services.db, clock, [new DepositReconcileHandler(s.t.services.deposits, clock)]);
  });
  afterAll(() => s.t.close());
  beforeEach(() => clock.set(new Date()));

  const db = () => s.t.services.db;
  /** Every due job, however many a tenant has (the runner takes a few of one tenant's at a time). */
  const runDueJobs = async () => {
    while ((await runner.runDueJobs()) > 0);
  };
  const balance = (tenant: Tenant) => ledger.balances(db(), 'sandbox', tenant.user.id);
  const call = (tenant: Tenant, key?: string) => (path: string, body: object) =>
    rest(s.t, tenant.keys.TRANSACTIONS)('POST', path, body, key ? { 'idempotency-key': key } : {});
  /** Refuses `table`'s writes of this tenant's rows that reach `status` (the second commit of each path). */
  const refuse = (tenant: Tenant, table: string, status: string) =>
    refuseWrites(db(), table, `new.user_id = '${tenant.user.id}' and new.status::text = '${status}'`);
  const keyRow = async (tenant: Tenant, key: string) =>
    (
      await queryRows<{ status: string; locked_until: string | null; resource_id: string | null }>(
        db(),
        sql`select status, locked_until, resource_id from idempotency_keys where user_id = ${tenant.user.id} and key = ${key}`,
      )
    )[0];
  /** The key is held for the configured lease from now, with the record attached. */
  const expectLeased = async (tenant: Tenant, key: string) => {
    const row = await keyRow(tenant, key);
    expect(row).toMatchObject({ status: 'running', resource_id: expect.any(String) });
    expect(new Date(row!.locked_until!).getTime()).toBe(clock.now().getTime() + LEASE_MS);
  };
  const postingsOf = async (kind: string, reference: string) =>
    (
      await queryRows<{ n: number }>(
        db(),
        sql`select count(*)::int as n from ledger_postings where kind = ${kind} and reference = ${reference}`,
      )
    )[0]!.n;
  const depositsOf = (tenant: Tenant) =>
    queryRows<{ id: string; status: string; reference: string }>(
      db(),
      sql`select id, status::text, reference from deposits where user_id = ${tenant.user.id} order by reference`,
    );
  async function storedCard(tenant: Tenant, number: string): Promise<string> {
    const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: { number, expMonth: 9, expYear: new Date().getUTCFullYear() + 3, cvv: '564' },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().data.id;
  }

  it('a sandbox transfer into the virtual account is one commit: refused, it records nothing; the retry with its key credits once', async () => {
    const tenant = await seedTenant(s.t.services);
    await s.t.services.deposits.permanentAccount(principalOf(tenant.user.id));
    const key = `va-${randomUUID()}`;
    const transfer = () => call(tenant, key)('/api/v1/wallet/sandbox/virtual-account/transfer', { amount: 250 });

    const undo = await refuse(tenant, 'deposits', 'completed');
    const cut = await transfer();
    await undo();
    expect(cut.statusCode, cut.body).toBe(503);
    // Nothing half-done for a retry to find and answer PENDING: no deposit, no credit, no key.
    expect(await depositsOf(tenant)).toEqual([]);
    expect(await balance(tenant)).toEqual({ available: 0n, held: 0n });
    expect(await keyRow(tenant, key)).toBeUndefined();

    const retried = await transfer();
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.json().data).toMatchObject({ status: 'COMPLETED', amount: 250 });
    const replayed = await transfer();
    expect(replayed.json().data).toEqual(retried.json().data);
    expect(await balance(tenant)).toEqual({ available: 25_000n, held: 0n });
    const [deposit, ...others] = await depositsOf(tenant);
    expect(others).toEqual([]);
    expect(await postingsOf('deposit', deposit!.id)).toBe(1);
  });

  it('a transfer into a virtual account left pending by a second commit that failed is credited by the next notice of it, once', async () => {
    const tenant = await seedTenant(s.t.services);
    const account = await s.t.services.deposits.permanentAccount(principalOf(tenant.user.id));
    // What the first commit of the two-commit release left: the pending deposit and its transaction.
    await db().execute(sql`insert into deposits (user_id, environment, reference, method, amount, status, provider, provider_ref)
      values (${tenant.user.id}::uuid, 'sandbox', 'VA-sbx_in_left', 'virtual_account', 40000, 'pending', 'sandbox', 'sbx_in_left')`);
    await db().execute(sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference, description)
      values (${tenant.user.id}::uuid, 'sandbox', 'DEPOSIT', 'PENDING', 40000, 'VA-sbx_in_left', 'Transfer into virtual account')`);
    const notice = () =>
      s.t.services.deposits.receiveIntoVirtualAccount('sandbox', account.accountNumber, 40_000n, 'sbx_in_left');
    expect(await notice()).toMatchObject({ status: 'completed' });
    expect(await notice()).toMatchObject({ status: 'completed' });
    expect(await balance(tenant)).toEqual({ available: 40_000n, held: 0n });
    expect(
      (await s.t.services.wallet.transactionByReference(principalOf(tenant.user.id), 'VA-sbx_in_left')).status,
    ).toBe('COMPLETED');
  });

  it('an instant card deposit whose second commit fails: 503, the key leased for IDEMPOTENCY_LEASE_MS, then the retry with the key charges no second time and credits once', async () => {
    const tenant = await seedTenant(s.t.services);
    const paymentMethodId = await storedCard(tenant, SANDBOX_PAYMENTS.cards.noAuth);
    const key = `card-${randomUUID()}`;
    const deposit = () =>
      call(tenant, key)('/api/v1/wallet/deposit/payment-method', { amount: 300, paymentMethodId, reference: 'CARD-1' });

    const undo = await refuse(tenant, 'deposits', 'completed');
    const cut = await deposit();
    await undo();
    expect(cut.statusCode, cut.body).toBe(503);
    expect((await depositsOf(tenant)).map((d) => d.status)).toEqual(['initiated']);
    expect(await balance(tenant)).toEqual({ available: 0n, held: 0n });
    await expectLeased(tenant, key);

    // Within the lease the first request may still be running: told to wait.
    clock.advance(LEASE_MS);
    expect((await deposit()).statusCode).toBe(409);
    clock.advance(1);
    const finished = await deposit();
    expect(finished.statusCode, finished.body).toBe(201);
    expect(finished.json().data).toMatchObject({ reference: 'CARD-1', status: 'COMPLETED', amount: 300 });
    expect((await deposit()).json().data).toEqual(finished.json().data);
    expect(await balance(tenant)).toEqual({ available: 30_000n, held: 0n });
    const [row] = await depositsOf(tenant);
    expect(await postingsOf('deposit', row!.id)).toBe(1);
    // The sandbox took one charge for the deposit's provider reference, not two.
    const sandbox = s.t.services.paymentsProvider('sandbox') as unknown as {
      recorded?: { collections: Array<{ reference: string }> };
    };
    const collections = sandbox.recorded?.collections.filter((c) => c.reference === `pgw-${row!.id}`);
    if (collections) expect(collections).toHaveLength(1);
    // The deposit's own job finds it finished and changes nothing.
    clock.advance(FINISH_JOB_AFTER_MS);
    await runDueJobs();
    expect(await balance(tenant)).toEqual({ available: 30_000n, held: 0n });
  });

  it('a card deposit cut off between its two commits is finished by deposit.reconcile after the lease, credited once; a transfer deposit cut off fails', async () => {
    const tenant = await seedTenant(s.t.services);
    const paymentMethodId = await storedCard(tenant, SANDBOX_PAYMENTS.cards.noAuth);
    const undoCredit = await refuse(tenant, 'deposits', 'completed');
    const card = await call(tenant)('/api/v1/wallet/deposit/payment-method', {
      amount: 120,
      paymentMethodId,
      reference: 'CUT-CARD',
    });
    await undoCredit();
    const undoStart = await refuse(tenant, 'deposits', 'pending');
    const transfer = await call(tenant)('/api/v1/wallet/deposits/bank-transfer', { amount: 80, reference: 'CUT-BT' });
    await undoStart();
    expect([card.statusCode, transfer.statusCode]).toEqual([503, 503]);
    expect((await depositsOf(tenant)).map((d) => d.status)).toEqual(['initiated', 'initiated']);

    // Not before the lease is over: the request may still be running.
    clock.advance(LEASE_MS - 1);
    await runDueJobs();
    expect((await depositsOf(tenant)).map((d) => d.status)).toEqual(['initiated', 'initiated']);
    clock.advance(FINISH_JOB_AFTER_MS);
    await runDueJobs();
    expect((await depositsOf(tenant)).map((d) => [d.reference, d.status])).toEqual([
      ['CUT-BT', 'failed'],
      ['CUT-CARD', 'completed'],
    ]);
    expect(await balance(tenant)).toEqual({ available: 12_000n, held: 0n });
    const principal = principalOf(tenant.user.id);
    expect((await s.t.services.wallet.transactionByReference(principal, 'CUT-CARD')).status).toBe('COMPLETED');
    expect((await s.t.services.wallet.transactionByReference(principal, 'CUT-BT')).status).toBe('FAILED');
    // Run again (a duplicate job, a second worker): nothing moves twice.
    const [, cardRow] = await depositsOf(tenant);
    await s.t.services.deposits.reconcile(cardRow!.id);
    expect(await balance(tenant)).toEqual({ available: 12_000n, held: 0n });
    expect(await postingsOf('deposit', cardRow!.id)).toBe(1);
  });

  it('an OTP step whose second commit fails: the retry with its key finishes it (the provider already took it), credited once; without a key the job does', async () => {
    const tenant = await seedTenant(s.t.services);
    const paymentMethodId = await storedCard(tenant, SANDBOX_PAYMENTS.cards.pinThenOtp);
    const startAt = async (reference: string) => {
      await call(tenant)('/api/v1/wallet/deposit/payment-method', { amount: 500, paymentMethodId, reference });
      const pin = await call(tenant)(`/api/v1/wallet/deposits/${reference}/authorize`, {
        type: 'pin',
        pin: SANDBOX_PAYMENTS.pin,
      });
      expect(pin.json().data).toMatchObject({ status: 'PENDING', nextAction: { type: 'requires_otp' } });
    };
    await startAt('OTP-KEY');
    await startAt('OTP-JOB');
    const key = `otp-${randomUUID()}`;
    const otp = (reference: string, withKey?: string) =>
      call(tenant, withKey)(`/api/v1/wallet/deposits/${reference}/authorize`, {
        type: 'otp',
        otp: SANDBOX_PAYMENTS.otp,
      });

    const undo = await refuse(tenant, 'deposits', 'completed');
    const cut = [await otp('OTP-KEY', key), await otp('OTP-JOB')];
    await undo();
    expect(cut.map((r) => r.statusCode)).toEqual([503, 503]);
    expect(await balance(tenant)).toEqual({ available: 0n, held: 0n });
    await expectLeased(tenant, key);

    clock.advance(LEASE_MS + 1);
    const finished = await otp('OTP-KEY', key);
    expect(finished.statusCode, finished.body).toBe(200);
    expect(finished.json().data).toMatchObject({ reference: 'OTP-KEY', status: 'COMPLETED' });
    expect(await balance(tenant)).toEqual({ available: 50_000n, held: 0n });

    clock.advance(FINISH_JOB_AFTER_MS);
    await runDueJobs();
    expect((await depositsOf(tenant)).map((d) => d.status)).toEqual(['completed', 'completed']);
    expect(await balance(tenant)).toEqual({ available: 100_000n, held: 0n });
    for (const d of await depositsOf(tenant)) expect(await postingsOf('deposit', d.id)).toBe(1);
  });

  it('a bill whose settle fails: held, the key leased for IDEMPOTENCY_LEASE_MS; the retry with the key settles it from the provider, paid and debited once', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const key = `bill-${randomUUID()}`;
    const pay = () =>
      call(tenant, key)('/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'mtn',
        amount: 200,
        reference: 'BILL-CUT',
      });
    const undo = await refuse(tenant, 'bill_records', 'SUCCESS');
    const cut = await pay();
    await undo();
    expect(cut.statusCode, cut.body).toBe(503);
    expect(await balance(tenant)).toEqual({ available: 80_000n, held: 20_000n });
    await expectLeased(tenant, key);

    clock.advance(LEASE_MS + 1);
    const finished = await pay();
    expect(finished.statusCode, finished.body).toBe(201);
    expect(finished.json().data).toMatchObject({ reference: 'BILL-CUT', status: 'SUCCESS' });
    expect((await pay()).json().data).toEqual(finished.json().data);
    expect(await balance(tenant)).toEqual({ available: 80_000n, held: 0n });
    expect(await ledger.totalOf(db(), 'sandbox')).toBe(0n);
  });

  it('a payout whose settle fails: held, the key leased for IDEMPOTENCY_LEASE_MS; the retry with the key settles it from the provider, sent and debited once', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const key = `payout-${randomUUID()}`;
    const withdraw = () =>
      call(tenant, key)('/api/v1/wallet/withdraw', {
        amount: 300,
        bankCode: '044',
        accountNumber: '0690000040',
        reference: 'PO-CUT',
      });
    const undo = await refuse(tenant, 'payouts', 'completed');
    const cut = await withdraw();
    await undo();
    expect(cut.statusCode, cut.body).toBe(503);
    expect(await balance(tenant)).toEqual({ available: 100_000n - 32_500n, held: 32_500n });
    await expectLeased(tenant, key);

    clock.advance(LEASE_MS + 1);
    const finished = await withdraw();
    expect(finished.statusCode, finished.body).toBe(201);
    expect(finished.json().data).toMatchObject({ reference: 'PO-CUT', status: 'completed' });
    expect((await withdraw()).json().data).toEqual(finished.json().data);
    expect(await balance(tenant)).toEqual({ available: 67_500n, held: 0n });
    expect(await ledger.totalOf(db(), 'sandbox')).toBe(0n);
  });
});
