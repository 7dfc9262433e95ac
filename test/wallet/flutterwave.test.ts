import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { DepositReconcileHandler } from '../../src/domain/wallet/wallet-jobs.js';
import { seedTenant, type Tenant } from '../helpers/app.js';
import { appOnFakeFlutterwave } from '../helpers/app-on-fake-flutterwave.js';
import { rest } from '../helpers/rest.js';
import { storedProductionCard } from '../helpers/wallet.js';

/** The production wallet through the Flutterwave adapter, against a local fake of its API. */
describe('NGN wallet on Flutterwave (production)', () => {
  const s = appOnFakeFlutterwave({ apis: 'payments and bills', listen: true });

  const call = (tenant: Tenant) => rest(s.t, tenant.productionKey);
  const balance = async (tenant: Tenant) => (await call(tenant)('GET', '/api/v1/wallet/balance')).json().data;

  it('tokenizes a card with encrypted fields, then runs a PIN-then-OTP charge to completion', async () => {
    const tenant = await seedTenant(s.t.services);
    const created = await call(tenant)('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: { number: '5531886652142950', expMonth: 9, expYear: 2032, cvv: '564' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data).toMatchObject({ brand: 'mastercard', last4: '2950' });
    const tokenized = s.flw.requests.find((r) => r.path === '/v4/payment-methods')!.body;
    expect(JSON.stringify(tokenized)).not.toContain('5531886652142950');
    expect(tokenized.card.nonce).toHaveLength(12);
    const started = await call(tenant)('POST', '/api/v1/wallet/deposit/payment-method', {
      amount: 1234.5,
      paymentMethodId: created.json().data.id,
      reference: 'FLW-1',
    });
    expect(started.json().data).toMatchObject({ status: 'PENDING', nextAction: { type: 'requires_pin' } });
    const charge = s.flw.requests.filter((r) => r.path === '/v4/charges').at(-1)!;
    expect(charge.body).toMatchObject({ amount: 1234.5, currency: 'NGN', reference: `pgw-${started.json().data.id}` });
    expect(charge.headers['x-idempotency-key']).toBe(charge.body.reference);
    expect(charge.headers['x-trace-id']).toEqual(expect.any(String));
    await call(tenant)('POST', '/api/v1/wallet/deposits/FLW-1/authorize', { type: 'pin', pin: '3310' });
    const done = await call(tenant)('POST', '/api/v1/wallet/deposits/FLW-1/authorize', { type: 'otp', otp: '12345' });
    expect(done.json().data.status).toBe('COMPLETED');
    expect(await balance(tenant)).toMatchObject({ availableKobo: 123_450 });
    expect(s.flw.tokensIssued).toBe(1);
  });

  it('completes a bank-transfer deposit from a verified webhook, once, and refuses a forged one', async () => {
    const tenant = await seedTenant(s.t.services);
    const started = (
      await call(tenant)('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 800, reference: 'FLW-BT' })
    ).json().data;
    expect(started).toMatchObject({
      status: 'PENDING',
      bankName: 'Wema Bank',
      accountNumber: expect.stringMatching(/^77\d{8}$/),
    });
    const chargeId = s.flw.addCharge(`pgw-${started.id}`, 'succeeded', 800);
    const notice = {
      type: 'charge.completed',
      data: { id: chargeId, reference: `pgw-${started.id}`, status: 'succeeded', amount: 800 },
    };
    const forged = await s.flw.notify(s.baseUrl, notice, 'wrong-hash');
    expect(forged.status).toBe(401);
    expect(await balance(tenant)).toMatchObject({ availableKobo: 0 });
    for (let i = 0; i < 3; i++) expect((await s.flw.notify(s.baseUrl, notice)).status).toBe(200);
    expect(await balance(tenant)).toMatchObject({ availableKobo: 80_000 });
    // A notice claiming success for a charge the API reports failed changes nothing.
    const other = (await call(tenant)('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 5 })).json().data;
    const failedCharge = s.flw.addCharge(`pgw-${other.id}`, 'failed');
    await s.flw.notify(s.baseUrl, {
      type: 'charge.completed',
      data: { id: failedCharge, reference: `pgw-${other.id}`, status: 'succeeded' },
    });
    expect((await call(tenant)('GET', `/api/v1/wallet/deposits/${other.reference}`)).json().data.status).toBe('FAILED');
    expect(await balance(tenant)).toMatchObject({ availableKobo: 80_000 });
  });

  it('settles a pending charge by polling when no webhook comes', async () => {
    const tenant = await seedTenant(s.t.services);
    const method = await storedProductionCard(s.t, tenant, { number: '5531886652142950', cvv: '564' });
    const started = (
      await call(tenant)('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 60,
        paymentMethodId: method.id,
        reference: 'FLW-POLL',
      })
    ).json().data;
    expect(started.status).toBe('PENDING');
    // The payer completes the charge with the provider directly; no webhook is sent.
    const charge = [...s.flw.charges.values()].find((c) => c['reference'] === `pgw-${started.id}`)!;
    charge['status'] = 'succeeded';
    delete charge['next_action'];
    const clock = new ManualClock(new Date(Date.now() + 6 * 60_000));
    const runner = new JobRunner(s.t.services.db, clock, [new DepositReconcileHandler(s.t.services.deposits, clock)]);
    await runner.runDueJobs();
    expect((await call(tenant)('GET', '/api/v1/wallet/deposits/FLW-POLL')).json().data.status).toBe('COMPLETED');
    expect(await balance(tenant)).toMatchObject({ availableKobo: 6000 });
  });

  it('lists banks, resolves accounts, and reads an HTTP 200 carrying an error body as an error', async () => {
    const tenant = await seedTenant(s.t.services);
    expect((await call(tenant)('GET', '/api/v1/wallet/banks')).json().data).toEqual([
      { code: '044', name: 'Access Bank' },
      { code: '058', name: 'Guaranty Trust Bank' },
    ]);
    const resolved = await call(tenant)('POST', '/api/v1/wallet/banks/resolve', {
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expect(resolved.json().data.accountName).toBe('Alexis Sanchez');
    const hidden = await call(tenant)('POST', '/api/v1/wallet/banks/resolve', {
      bankCode: '044',
      accountNumber: '2000000000',
    });
    expect(hidden.statusCode).toBe(400);
    expect(hidden.json().message).toContain('accountNumber');
  });

  it('pays out, releases a failed payout, and settles a 503 payout from the transfer webhook', async () => {
    const tenant = await seedTenant(s.t.services);
    const started = (await call(tenant)('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 5000 })).json().data;
    await s.flw.notify(s.baseUrl, {
      type: 'charge.completed',
      data: { id: s.flw.addCharge(`pgw-${started.id}`), reference: `pgw-${started.id}` },
    });
    const ok = await call(tenant)('POST', '/api/v1/wallet/withdraw', {
      amount: 1000,
      bankCode: '044',
      accountNumber: '0690000040',
      reference: 'FLW-PO',
    });
    expect(ok.json().data).toMatchObject({ status: 'completed', accountName: 'Alexis Sanchez' });
    const sent = s.flw.requests.filter((r) => r.path === '/v4/direct-transfers').at(-1)!.body;
    expect(sent).toMatchObject({
      action: 'instant',
      type: 'bank',
      reference: `pgw-${ok.json().data.id}`,
      payment_instruction: {
        amount: { applies_to: 'destination_currency', value: 1000 },
        recipient: { bank: { account_number: '0690000040', code: '044' } },
      },
    });
    const failed = await call(tenant)('POST', '/api/v1/wallet/withdraw', {
      amount: 1000,
      bankCode: '044',
      accountNumber: '0000000000',
    });
    expect(failed.json().data.status).toBe('failed');
    const unknown = await call(tenant)('POST', '/api/v1/wallet/withdraw', {
      amount: 1000,
      bankCode: '044',
      accountNumber: '9999999999',
      reference: 'FLW-503',
    });
    expect(unknown.json().data.status).toBe('processing');
    expect(await balance(tenant)).toMatchObject({ availableKobo: 500_000 - 102_500 - 102_500, heldKobo: 102_500 });
    const id = unknown.json().data.id;
    expect(
      (
        await s.flw.notify(s.baseUrl, {
          type: 'transfer.disburse',
          data: { id: 'trf', reference: `pgw-${id}`, status: 'SUCCEEDED' },
        })
      ).status,
    ).toBe(200);
    expect((await call(tenant)('GET', '/api/v1/wallet/payouts/FLW-503')).json().data.status).toBe('completed');
    expect(await balance(tenant)).toMatchObject({ availableKobo: 295_000, heldKobo: 0 });
    expect(await ledger.totalOf(s.t.services.db, 'production')).toBe(0n);
  });

  it('makes hosted payment links with v3 Standard, USSD charges, and permanent accounts', async () => {
    const tenant = await seedTenant(s.t.services);
    const link = await call(tenant)('POST', '/api/v1/wallet/deposits/payment-link', {
      amount: 20,
      redirectUrl: 'https://partner.example/back',
    });
    expect(link.json().data.nextAction.redirect_url.url).toMatch(/^https:\/\/checkout\.flutterwave\.test\/pay\/pgw-/);
    const ussd = await call(tenant)('POST', '/api/v1/wallet/deposits/ussd', { amount: 20, bankCode: '058' });
    expect(ussd.json().data.nextAction).toMatchObject({
      type: 'payment_instruction',
      payment_instruction: { note: 'Dial *889*767*1234#' },
    });
    const account = await call(tenant)('POST', '/api/v1/wallet/virtual-account');
    expect(account.json().data).toMatchObject({ bankName: 'Wema Bank', accountName: 'Ada Obi' });
    expect(s.flw.requests.filter((r) => r.path === '/v4/virtual-accounts').at(-1)!.body).toMatchObject({
      account_type: 'static',
    });
  });
});
