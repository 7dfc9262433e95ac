import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FlutterwaveBillsProvider } from '../../src/domain/bills/flutterwave-bills-provider.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { FakeFlutterwave } from '../fakes/flutterwave.js';
import { spoil } from '../fakes/malformed.js';
import { seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { flutterwaveAgainst } from '../helpers/reconciliation.js';
import { rest } from '../helpers/rest.js';
import { expectShapeFault, expectShapeRejection } from './upstream-fault.js';

const PAYMENTS = 'The payments provider';
const BILLS = 'The bills provider';
const wide = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };

/**
 * Flutterwave (v4 payments, v3 Standard, v3 Bills and the v3 lists) answering 200 in shapes other
 * than the documented ones: a read is a 503 naming the path, a call that may have moved money
 * leaves its operation pending for reconciliation, never failed and never succeeded.
 */
describe('Flutterwave answers that are not their documented shape', () => {
  let flw: FakeFlutterwave;
  let s: StartedTestApp;

  beforeAll(async () => {
    flw = await new FakeFlutterwave().start();
    s = await startTestApp({
      isolated: true,
      config: {
        RATE_LIMIT_PER_MINUTE: 100_000,
        FLUTTERWAVE_CLIENT_ID: flw.clientId,
        FLUTTERWAVE_CLIENT_SECRET: flw.clientSecret,
        FLUTTERWAVE_ENCRYPTION_KEY: flw.encryptionKey,
        FLUTTERWAVE_SECRET_HASH: flw.secretHash,
        FLUTTERWAVE_BASE_URL: `${flw.url}/v4`,
        FLUTTERWAVE_TOKEN_URL: `${flw.url}/token`,
        FLUTTERWAVE_V3_SECRET_KEY: flw.v3SecretKey,
        FLUTTERWAVE_V3_BASE_URL: `${flw.url}/v3`,
      },
    });
  });
  afterEach(() => flw.malformed.clear());
  afterAll(async () => {
    await s.t.close();
    await flw.stop();
  });

  const call = (tenant: Tenant) => rest(s.t, tenant.productionKey);
  const balance = async (tenant: Tenant) => (await call(tenant)('GET', '/api/v1/wallet/balance')).json().data;

  async function funded(naira: bigint): Promise<Tenant> {
    const tenant = await seedTenant(s.t.services);
    await s.t.services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'production',
        kind: 'test-funding',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('production', 'provider_clearing'), amount: -naira * 100n },
          { account: walletOf('production', tenant.user.id), amount: naira * 100n },
        ],
      }),
    );
    return tenant;
  }

  it('answers 503 naming the path when the bank list is not a list, is null, or a bank has no code', async () => {
    const banks = () => call(s.tenant)('GET', '/api/v1/wallet/banks');
    flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: spoil.notArray(['data']), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/data', ['Access Bank']);
    flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: spoil.nullBody(), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/');
    flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: spoil.drop(['data', 1, 'code']), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/data/1/code', ['Guaranty Trust Bank']);
    // A 200 that is neither a success nor Flutterwave's error is not taken for a refusal (a 400).
    flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: () => ({ data: [] }), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/status');
    // Once the provider answers as documented, the list is served (a fault is never cached).
    expect((await banks()).json().data).toHaveLength(2);
  });

  it('answers 503 for a resolved account or a card method in the wrong shape, and keeps a deposit without its account PENDING', async () => {
    const tenant = await seedTenant(s.t.services);
    flw.malformed.add({ method: 'POST', path: /account-resolve/, body: spoil.asArray(['data']), times: 1 });
    const resolved = await call(tenant)('POST', '/api/v1/wallet/banks/resolve', {
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expectShapeFault(resolved, PAYMENTS, '/data', ['Alexis Sanchez']);
    flw.malformed.add({ method: 'POST', path: /payment-methods/, body: spoil.drop(['data', 'id']), times: 1 });
    const card = await call(tenant)('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: { number: '5531886652142950', expMonth: 9, expYear: 2032, cvv: '564' },
    });
    expectShapeFault(card, PAYMENTS, '/data/id', ['2950']);
    flw.malformed.add({
      method: 'POST',
      path: /virtual-accounts/,
      body: spoil.set(['data', 'account_expiration_datetime'], 'tomorrow'),
      times: 1,
    });
    // A deposit already recorded is not failed for it: it stays PENDING, with no account to show.
    const account = await call(tenant)('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 50 });
    expect(account.statusCode, account.body).toBeLessThan(500);
    expect(account.json().data).toMatchObject({ status: 'PENDING', accountNumber: null });
  });

  it('keeps a card deposit PENDING when the charge was made but its answer is unreadable', async () => {
    const tenant = await seedTenant(s.t.services);
    const method = (
      await call(tenant)('POST', '/api/v1/payment-methods', {
        type: 'card',
        card: { number: '4111111111111111', expMonth: 9, expYear: 2032, cvv: '123' },
      })
    ).json().data;
    const spoilers = [spoil.drop(['data', 'id']), spoil.asArray(['data']), () => ({}), spoil.nullBody()];
    for (const [i, body] of spoilers.entries()) {
      flw.malformed.add({ method: 'POST', path: /^\/v4\/charges$/, body, times: 1 });
      const started = await call(tenant)('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 100,
        paymentMethodId: method.id,
        reference: `MAL-CHG-${i}`,
      });
      expect(started.statusCode, started.body).toBeLessThan(500);
      expect(started.json().data.status, `spoiler ${i}`).toBe('PENDING');
      // Flutterwave made (and settled) the charge: only its answer was lost.
      const charge = [...flw.charges.values()].find((c) => c['reference'] === `pgw-${started.json().data.id}`);
      expect(charge?.['status']).toBe('succeeded');
      const later = await call(tenant)('GET', `/api/v1/wallet/deposits/MAL-CHG-${i}`);
      expect(later.json().data.status).toBe('PENDING');
    }
    expect(await balance(tenant)).toMatchObject({ availableKobo: 0 });
  });

  it('keeps a payout processing, its money held, when the transfer was sent but its answer is unreadable', async () => {
    const tenant = await funded(10_000n);
    const spoilers = [spoil.nullBody(), spoil.drop(['data', 'status']), spoil.set(['data', 'id'], 42)];
    for (const [i, body] of spoilers.entries()) {
      flw.malformed.add({ method: 'POST', path: /^\/v4\/direct-transfers$/, body, times: 1 });
      const sent = await call(tenant)('POST', '/api/v1/wallet/withdraw', {
        amount: 1000,
        bankCode: '044',
        accountNumber: '0690000040',
        reference: `MAL-PO-${i}`,
      });
      expect(sent.statusCode, sent.body).toBeLessThan(500);
      expect(sent.json().data.status, `spoiler ${i}`).toBe('processing');
      expect(flw.transfers.get(`pgw-${sent.json().data.id}`)?.['status']).toBe('SUCCEEDED');
    }
    expect(await balance(tenant)).toMatchObject({ availableKobo: 1_000_000 - 3 * 102_500, heldKobo: 3 * 102_500 });
  });

  it('answers 503 naming the path for a bills catalogue or validation in the wrong shape', async () => {
    const bills = call(s.tenant);
    flw.malformed.add({ method: 'GET', path: /top-bill-categories/, body: spoil.notArray(['data']), times: 1 });
    expectShapeFault(await bills('GET', '/api/v1/bills/categories'), BILLS, '/data');
    flw.malformed.add({
      method: 'GET',
      path: /billers\/BIL112\/items/,
      body: spoil.numberAsString(['data', 0, 'amount']),
      times: 1,
    });
    expectShapeFault(await bills('GET', '/api/v1/bills/billers/BIL112/items'), BILLS, '/data/0/amount');
    flw.malformed.add({ method: 'GET', path: /billers\/BIL112\/items/, body: spoil.nullBody(), times: 1 });
    expectShapeFault(await bills('GET', '/api/v1/bills/billers/BIL112/items'), BILLS, '/');
    flw.malformed.add({ method: 'GET', path: /\/validate/, body: spoil.asArray(['data']), times: 1 });
    const validated = await bills('POST', '/api/v1/bills/validate', {
      customer: '45012345678',
      billerCode: 'BIL112',
      itemCode: 'UB157',
    });
    expectShapeFault(validated, BILLS, '/data', ['TUNDE BAKARE', '1 Broad St']);
  });

  it('keeps a bill PENDING with its hold when the payment was made but its answer is unreadable', async () => {
    const tenant = await funded(10_000n);
    // A success whose data is null was once read as a refusal, failing a bill the biller had paid.
    const spoilers = [spoil.set(['data'], null), spoil.asArray(['data']), spoil.drop(['data', 'tx_ref']), () => ({})];
    for (const [i, body] of spoilers.entries()) {
      flw.malformed.add({ method: 'POST', path: /\/payment$/, body, times: 1 });
      const paid = await call(tenant)('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'MTN',
        amount: 500,
        reference: `MAL-BILL-${i}`,
      });
      expect(paid.statusCode, paid.body).toBeLessThan(500);
      expect(paid.json().data.status, `spoiler ${i}`).toBe('PENDING');
      expect(flw.bills.get(`pgw-${paid.json().data.id}`)?.['status']).toBe('success');
    }
    expect(await balance(tenant)).toMatchObject({ availableKobo: 1_000_000 - 4 * 50_000, heldKobo: 4 * 50_000 });
  });

  it('rejects every v3 reconciliation list in the wrong shape as unavailable, naming the path', async () => {
    const payments = flutterwaveAgainst(flw);
    flw.addCharge('pgw-list-1', 'succeeded', 2500);
    flw.addTransfer('pgw-list-2', 1000);
    flw.addSettlement([{ txRef: 'pgw-list-1', amount: 2500, fee: 35 }], new Date());

    // The faults of the day: `rows.map is not a function` and the like, now each a named path.
    flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.notArray(['data']), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/data');
    flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.nullBody(), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/');
    flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.set(['data', 0, 'amount'], 'ten'), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/data/0/amount', 'unavailable', ['ten']);
    flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.set(['data', 0, 'amount'], 12.345), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/data/0');
    flw.malformed.add({ path: /^\/v3\/transfers/, body: spoil.drop(['data', 0, 'id']), times: 1 });
    await expectShapeRejection(payments.listTransfers(wide), '/data/0/id', 'unavailable', ['pgw-list-2']);
    flw.malformed.add({ path: /^\/v3\/settlements\/\d+/, body: spoil.asArray(['data']), times: 1 });
    await expectShapeRejection(payments.listSettlements(wide), '/data');
    flw.malformed.add({ path: /^\/v3\/settlements\?/, body: spoil.set(['data', 0, 'created_at'], 'May'), times: 1 });
    await expectShapeRejection(payments.listSettlements(wide), '/data/0/created_at');

    const bills = new FlutterwaveBillsProvider({ secretKey: flw.v3SecretKey, baseUrl: `${flw.url}/v3` });
    flw.malformed.add({ path: /^\/v3\/bills\?/, body: spoil.set(['data'], { rows: [] }), times: 1 });
    await expectShapeRejection(bills.listPayments(wide), '/data/transactions');
    flw.malformed.add({ path: /^\/v3\/bills\?/, body: spoil.set(['data', 0, 'amount'], '5,000'), times: 1 });
    await expectShapeRejection(bills.listPayments(wide), '/data/0/amount', 'unavailable', ['5,000']);
    flw.malformed.add({ path: /^\/v3\/bills\/pgw-/, body: spoil.set(['data', 'status'], 7), times: 1 });
    const billRef = [...flw.bills.keys()][0]!;
    await expectShapeRejection(bills.status(billRef), '/data/status');

    // As documented again, every list reads.
    expect(await payments.listCollections(wide)).not.toHaveLength(0);
    expect(await bills.listPayments(wide)).not.toHaveLength(0);
  });
});
