import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { idempotencyKeys } from '../../src/db/ledger-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { transactionStore } from '../../src/domain/wallet/transaction-store.js';
import { PayoutReconcileHandler } from '../../src/domain/wallet/wallet-jobs.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';
import { eventsOf } from '../helpers/events.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

describe('payouts', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    runner = new JobRunner(s.t.services.db, clock, [new PayoutReconcileHandler(s.t.services.payouts, clock)]);
  });
  afterAll(() => s.t.close());
  beforeEach(() => clock.set(new Date()));

  const withdrawal = (overrides: Record<string, unknown> = {}) => ({
    amount: 1000,
    bankCode: '044',
    accountNumber: '0690000040',
    narration: 'rent',
    ...overrides,
  });

  it('lists banks and resolves an account number to its name', async () => {
    const call = rest(s.t, s.tenant.keys.READ_ONLY);
    const banks = await call('GET', '/api/v1/wallet/banks');
    expect(banks.json().data).toContainEqual({ code: '044', name: 'Access Bank' });
    const resolved = await call('POST', '/api/v1/wallet/banks/resolve', {
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expect(resolved.statusCode).toBe(200);
    expect(resolved.json().data).toEqual({
      bankCode: '044',
      accountNumber: '0690000040',
      accountName: 'Alexis Sanchez',
    });
    const unknown = await call('POST', '/api/v1/wallet/banks/resolve', {
      bankCode: '044',
      accountNumber: SANDBOX_PAYMENTS.unknownAccount,
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('accountNumber');
    expect(
      (await call('POST', '/api/v1/wallet/banks/resolve', { bankCode: '999', accountNumber: '0690000040' })).json()
        .message,
    ).toContain('bankCode');
    expect(
      (await call('POST', '/api/v1/wallet/banks/resolve', { bankCode: '044', accountNumber: '12345' })).json().message,
    ).toContain('accountNumber');
  });

  it('refuses by name a reference another operation took between its check and its insert, holding nothing', async () => {
    const tenant = await seedTenant(s.t.services);
    const friend = await seedTenant(s.t.services);
    await fund(s.t, tenant, 5000);
    const sent = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', {
      amount: 1,
      recipient: friend.user.id,
      reference: 'PO-RACED',
    });
    expect(sent.statusCode).toBe(201);
    // The check by reference misses the holder once, as it does when the holder commits just after it.
    const store = transactionStore as { findByReference: typeof transactionStore.findByReference };
    const findByReference = store.findByReference;
    let missed = false;
    store.findByReference = async (...args) => {
      if (missed) return findByReference(...args);
      missed = true;
      return undefined;
    };
    try {
      const refused = await rest(s.t, tenant.keys.TRANSACTIONS)(
        'POST',
        '/api/v1/wallet/withdraw',
        withdrawal({ reference: 'PO-RACED' }),
      );
      expect(missed).toBe(true);
      expect(refused.statusCode).toBe(409);
      expect(refused.json().message).toContain(sent.json().data.id);
    } finally {
      store.findByReference = findByReference;
    }
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 499_900, heldKobo: 0 });
  });

  it('holds amount plus fee, captures on success with the fee to the fees account, and emits payout.* in order', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 5000);
    const response = await rest(s.t, tenant.keys.TRANSACTIONS)(
      'POST',
      '/api/v1/wallet/withdraw',
      withdrawal({ reference: 'PO-ok' }),
    );
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toMatchObject({
      reference: 'PO-ok',
      status: 'completed',
      amount: 1000,
      fee: 25,
      bankName: 'Access Bank',
      accountName: 'Alexis Sanchez',
      narration: 'rent',
    });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 397_500, heldKobo: 0 });
    const events = await eventsOf(s.t, tenant, 'payout.', 2);
    expect(events.map((e) => [e.type, e.data['status']])).toEqual([
      ['payout.initiated', 'initiated'],
      ['payout.completed', 'completed'],
    ]);
    expect(events[1]!.data).toMatchObject({
      reference: 'PO-ok',
      amount: 1000,
      currency: 'NGN',
      bankName: 'Access Bank',
      accountNumber: '0690000040',
      accountName: 'Alexis Sanchez',
    });
    const transaction = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/transactions/reference/PO-ok')).json()
      .data;
    expect(transaction).toMatchObject({ type: 'WITHDRAWAL', status: 'COMPLETED', amount: 1000, fee: 25 });
    expect(await ledger.totalOf(s.t.services.db, 'sandbox')).toBe(0n);
  });

  it('returns the held money when the payout fails', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 2000);
    const response = await rest(s.t, tenant.keys.TRANSACTIONS)(
      'POST',
      '/api/v1/wallet/withdraw',
      withdrawal({ accountNumber: SANDBOX_PAYMENTS.payouts.failingAccount, reference: 'PO-fail' }),
    );
    expect(response.json().data).toMatchObject({
      status: 'failed',
      failureReason: expect.stringContaining('rejected'),
    });
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 200_000, heldKobo: 0 });
    expect((await eventsOf(s.t, tenant, 'payout.', 2)).map((e) => e.type)).toEqual([
      'payout.initiated',
      'payout.failed',
    ]);
    // The funding deposit's pair, then the withdrawal's.
    expect((await eventsOf(s.t, tenant, 'transaction.', 4)).map((e) => e.type)).toEqual([
      'transaction.created',
      'transaction.completed',
      'transaction.created',
      'transaction.failed',
    ]);
  });

  it('keeps a timed-out payout processing with the money held, until reconciliation settles it', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 2000);
    const response = await rest(s.t, tenant.keys.TRANSACTIONS)(
      'POST',
      '/api/v1/wallet/withdraw',
      withdrawal({ accountNumber: SANDBOX_PAYMENTS.payouts.timeoutAccount, reference: 'PO-timeout' }),
    );
    expect(response.statusCode).toBe(201);
    expect(response.json().data.status).toBe('processing');
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 97_500, heldKobo: 102_500 });
    clock.advance(3 * 60_000);
    await runner.runDueJobs();
    const settled = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/payouts/PO-timeout')).json().data;
    expect(settled.status).toBe('completed');
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 97_500, heldKobo: 0 });
    expect((await eventsOf(s.t, tenant, 'payout.', 3)).map((e) => e.type)).toEqual([
      'payout.initiated',
      'payout.processing',
      'payout.completed',
    ]);
  });

  it('refuses too little balance (insufficient funds) and bad input, holding nothing', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 100);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const poor = await call('POST', '/api/v1/wallet/withdraw', withdrawal({ amount: 90 }));
    expect(poor.statusCode).toBe(400);
    expect(poor.json()).toMatchObject({ errorCode: 'INSUFFICIENT_FUNDS', message: expect.stringContaining('fee') });
    for (const [body, field] of [
      [withdrawal({ amount: 0 }), 'amount'],
      [withdrawal({ amount: 10.001 }), 'amount'],
      [withdrawal({ amount: '10' }), 'amount'],
      [withdrawal({ bankCode: 'XYZ' }), 'bankCode'],
      [withdrawal({ accountNumber: '123' }), 'accountNumber'],
      [withdrawal({ reference: 'bad ref!' }), 'reference'],
      [{ bankCode: '044', accountNumber: '0690000040' }, 'amount'],
    ] as const) {
      const response = await call('POST', '/api/v1/wallet/withdraw', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().message, JSON.stringify(body)).toContain(field);
    }
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 10_000, heldKobo: 0 });
    expect((await rest(s.t, tenant.keys.READ_ONLY)('POST', '/api/v1/wallet/withdraw', withdrawal())).statusCode).toBe(
      403,
    );
    expect((await rest(s.t, s.tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/payouts/PO-ok')).statusCode).toBe(404);
  });

  it('answers 409 to a retry while the first request still runs, then replays its answer', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 3000);
    const call = rest(s.t, tenant.keys.TRANSACTIONS);
    const key = { 'idempotency-key': `slow-${tenant.user.id}` };
    const body = withdrawal({ accountNumber: SANDBOX_PAYMENTS.payouts.slowAccount });
    const first = call('POST', '/api/v1/wallet/withdraw', body, key);
    // The first request has claimed its key (and is now inside the two-second provider call).
    await waitUntil(
      async () =>
        (await s.t.services.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key['idempotency-key'])))
          .length === 1,
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    const during = await call('POST', '/api/v1/wallet/withdraw', body, key);
    expect(during.statusCode).toBe(409);
    expect(during.json().message).toContain('still being processed');
    const done = await first;
    expect(done.statusCode).toBe(201);
    const after = await call('POST', '/api/v1/wallet/withdraw', body, key);
    expect(after.json().data).toEqual(done.json().data);
    expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 300_000 - 102_500 });
  });

  it('serves payouts over GraphQL', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 500);
    const sent = await graphql(
      s.t.app,
      tenant.keys.TRANSACTIONS,
      'mutation { withdraw(input: { amount: 100, bankCode: "058", accountNumber: "0123456789", reference: "G-PO" }) { status amount amountKobo fee currency bankName accountName version } }',
    );
    expect(sent.body.data!.withdraw).toEqual({
      status: 'completed',
      amount: 100,
      amountKobo: 10000,
      fee: 25,
      currency: 'NGN',
      bankName: 'Guaranty Trust Bank',
      accountName: 'SANDBOX ACCOUNT 6789',
      version: 2,
    });
    const read = await graphql(
      s.t.app,
      tenant.keys.READ_ONLY,
      '{ payout(reference: "G-PO") { status } banks { code } resolveBankAccount(bankCode: "044", accountNumber: "0690000040") { accountName } }',
    );
    expect(read.body.data).toMatchObject({
      payout: { status: 'completed' },
      resolveBankAccount: { accountName: 'Alexis Sanchez' },
    });
  });
});
