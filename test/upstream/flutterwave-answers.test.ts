import { afterEach, describe, expect, it } from 'vitest';
import { FlutterwaveBillsProvider } from '../../src/domain/bills/flutterwave-bills-provider.js';
import { type Spoiler, spoil } from '../fakes/malformed.js';
import { seedTenant, type Tenant } from '../helpers/app.js';
import { appOnFakeFlutterwave } from '../helpers/app-on-fake-flutterwave.js';
import { flutterwaveAgainst } from '../helpers/reconciliation.js';
import { rest } from '../helpers/rest.js';
import { seedTenantWithProductionFunds, storedProductionCard } from '../helpers/wallet.js';
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
  const s = appOnFakeFlutterwave({ apis: 'payments and bills' });
  afterEach(() => s.flw.malformed.clear());

  const call = (tenant: Tenant) => rest(s.t, tenant.productionKey);
  const balance = async (tenant: Tenant) => (await call(tenant)('GET', '/api/v1/wallet/balance')).json().data;

  const funded = (naira: bigint) => seedTenantWithProductionFunds(s.t.services, naira);

  /**
   * One POST a spoiler, each making a provider call (`path`) that acts but answers in the spoiled
   * shape: the POST is never a 5xx and leaves its operation `leaves`; `check` looks at what the
   * provider did; the tenant's balance is then `balanceAfter`.
   */
  async function eachAnswerSpoiled(
    tenant: Tenant,
    calls: {
      url: string;
      body: (i: number) => object;
      path: RegExp;
      spoilers: Array<Spoiler['body']>;
      leaves: string;
      check: (id: string, i: number) => Promise<void> | void;
      balanceAfter: object;
    },
  ): Promise<void> {
    for (const [i, body] of calls.spoilers.entries()) {
      s.flw.malformed.add({ method: 'POST', path: calls.path, body, times: 1 });
      const answer = await call(tenant)('POST', calls.url, calls.body(i));
      expect(answer.statusCode, answer.body).toBeLessThan(500);
      expect(answer.json().data.status, `spoiler ${i}`).toBe(calls.leaves);
      await calls.check(answer.json().data.id, i);
    }
    expect(await balance(tenant)).toMatchObject(calls.balanceAfter);
  }

  it('answers 503 naming the path when the bank list is not a list, is null, or a bank has no code', async () => {
    const banks = () => call(s.tenant)('GET', '/api/v1/wallet/banks');
    s.flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: spoil.notArray(['data']), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/data', ['Access Bank']);
    s.flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: spoil.nullBody(), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/');
    s.flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: spoil.drop(['data', 1, 'code']), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/data/1/code', ['Guaranty Trust Bank']);
    // A 200 that is neither a success nor Flutterwave's error is not taken for a refusal (a 400).
    s.flw.malformed.add({ method: 'GET', path: /^\/v4\/banks/, body: () => ({ data: [] }), times: 1 });
    expectShapeFault(await banks(), PAYMENTS, '/status');
    // Once the provider answers as documented, the list is served (a fault is never cached).
    expect((await banks()).json().data).toHaveLength(2);
  });

  it('answers 503 for a resolved account or a card method in the wrong shape, and keeps a deposit without its account PENDING', async () => {
    const tenant = await seedTenant(s.t.services);
    s.flw.malformed.add({ method: 'POST', path: /account-resolve/, body: spoil.asArray(['data']), times: 1 });
    const resolved = await call(tenant)('POST', '/api/v1/wallet/banks/resolve', {
      bankCode: '044',
      accountNumber: '0690000040',
    });
    expectShapeFault(resolved, PAYMENTS, '/data', ['Alexis Sanchez']);
    s.flw.malformed.add({ method: 'POST', path: /payment-methods/, body: spoil.drop(['data', 'id']), times: 1 });
    const card = await call(tenant)('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: { number: '5531886652142950', expMonth: 9, expYear: 2032, cvv: '564' },
    });
    expectShapeFault(card, PAYMENTS, '/data/id', ['2950']);
    s.flw.malformed.add({
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
    const method = await storedProductionCard(s.t, tenant, { number: '4111111111111111', cvv: '123' });
    await eachAnswerSpoiled(tenant, {
      url: '/api/v1/wallet/deposit/payment-method',
      body: (i) => ({ amount: 100, paymentMethodId: method.id, reference: `MAL-CHG-${i}` }),
      path: /^\/v4\/charges$/,
      spoilers: [spoil.drop(['data', 'id']), spoil.asArray(['data']), () => ({}), spoil.nullBody()],
      leaves: 'PENDING',
      check: async (id, i) => {
        // Flutterwave made (and settled) the charge: only its answer was lost.
        const charge = [...s.flw.charges.values()].find((c) => c['reference'] === `pgw-${id}`);
        expect(charge?.['status']).toBe('succeeded');
        const later = await call(tenant)('GET', `/api/v1/wallet/deposits/MAL-CHG-${i}`);
        expect(later.json().data.status).toBe('PENDING');
      },
      balanceAfter: { availableKobo: 0 },
    });
  });

  it('keeps a payout processing, its money held, when the transfer was sent but its answer is unreadable', async () => {
    await eachAnswerSpoiled(await funded(10_000n), {
      url: '/api/v1/wallet/withdraw',
      body: (i) => ({ amount: 1000, bankCode: '044', accountNumber: '0690000040', reference: `MAL-PO-${i}` }),
      path: /^\/v4\/direct-transfers$/,
      spoilers: [spoil.nullBody(), spoil.drop(['data', 'status']), spoil.set(['data', 'id'], 42)],
      leaves: 'processing',
      check: (id) => expect(s.flw.transfers.get(`pgw-${id}`)?.['status']).toBe('SUCCEEDED'),
      balanceAfter: { availableKobo: 1_000_000 - 3 * 102_500, heldKobo: 3 * 102_500 },
    });
  });

  it('answers 503 naming the path for a bills catalogue or validation in the wrong shape', async () => {
    const bills = call(s.tenant);
    s.flw.malformed.add({ method: 'GET', path: /top-bill-categories/, body: spoil.notArray(['data']), times: 1 });
    expectShapeFault(await bills('GET', '/api/v1/bills/categories'), BILLS, '/data');
    s.flw.malformed.add({
      method: 'GET',
      path: /billers\/BIL112\/items/,
      body: spoil.numberAsString(['data', 0, 'amount']),
      times: 1,
    });
    expectShapeFault(await bills('GET', '/api/v1/bills/billers/BIL112/items'), BILLS, '/data/0/amount');
    s.flw.malformed.add({ method: 'GET', path: /billers\/BIL112\/items/, body: spoil.nullBody(), times: 1 });
    expectShapeFault(await bills('GET', '/api/v1/bills/billers/BIL112/items'), BILLS, '/');
    s.flw.malformed.add({ method: 'GET', path: /\/validate/, body: spoil.asArray(['data']), times: 1 });
    const validated = await bills('POST', '/api/v1/bills/validate', {
      customer: '45012345678',
      billerCode: 'BIL112',
      itemCode: 'UB157',
    });
    expectShapeFault(validated, BILLS, '/data', ['TUNDE BAKARE', '1 Broad St']);
  });

  it('keeps a bill PENDING with its hold when the payment was made but its answer is unreadable', async () => {
    await eachAnswerSpoiled(await funded(10_000n), {
      url: '/api/v1/bills/buy-airtime',
      body: (i) => ({ phoneNumber: '08031234567', biller: 'MTN', amount: 500, reference: `MAL-BILL-${i}` }),
      path: /\/payment$/,
      // A success whose data is null was once read as a refusal, failing a bill the biller had paid.
      spoilers: [spoil.set(['data'], null), spoil.asArray(['data']), spoil.drop(['data', 'tx_ref']), () => ({})],
      leaves: 'PENDING',
      check: (id) => expect(s.flw.bills.get(`pgw-${id}`)?.['status']).toBe('success'),
      balanceAfter: { availableKobo: 1_000_000 - 4 * 50_000, heldKobo: 4 * 50_000 },
    });
  });

  it('rejects every v3 reconciliation list in the wrong shape as unavailable, naming the path', async () => {
    const payments = flutterwaveAgainst(s.flw);
    s.flw.addCharge('pgw-list-1', 'succeeded', 2500);
    s.flw.addTransfer('pgw-list-2', 1000);
    s.flw.addSettlement([{ txRef: 'pgw-list-1', amount: 2500, fee: 35 }], new Date());

    // The faults of the day: `rows.map is not a function` and the like, now each a named path.
    s.flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.notArray(['data']), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/data');
    s.flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.nullBody(), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/');
    s.flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.set(['data', 0, 'amount'], 'ten'), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/data/0/amount', 'unavailable', ['ten']);
    s.flw.malformed.add({ path: /^\/v3\/transactions/, body: spoil.set(['data', 0, 'amount'], 12.345), times: 1 });
    await expectShapeRejection(payments.listCollections(wide), '/data/0');
    s.flw.malformed.add({ path: /^\/v3\/transfers/, body: spoil.drop(['data', 0, 'id']), times: 1 });
    await expectShapeRejection(payments.listTransfers(wide), '/data/0/id', 'unavailable', ['pgw-list-2']);
    s.flw.malformed.add({ path: /^\/v3\/settlements\/\d+/, body: spoil.asArray(['data']), times: 1 });
    await expectShapeRejection(payments.listSettlements(wide), '/data');
    s.flw.malformed.add({ path: /^\/v3\/settlements\?/, body: spoil.set(['data', 0, 'created_at'], 'May'), times: 1 });
    await expectShapeRejection(payments.listSettlements(wide), '/data/0/created_at');

    const bills = new FlutterwaveBillsProvider({ secretKey: s.flw.v3SecretKey, baseUrl: `${s.flw.url}/v3` });
    s.flw.malformed.add({ path: /^\/v3\/bills\?/, body: spoil.set(['data'], { rows: [] }), times: 1 });
    await expectShapeRejection(bills.listPayments(wide), '/data/transactions');
    s.flw.malformed.add({ path: /^\/v3\/bills\?/, body: spoil.set(['data', 0, 'amount'], '5,000'), times: 1 });
    await expectShapeRejection(bills.listPayments(wide), '/data/0/amount', 'unavailable', ['5,000']);
    s.flw.malformed.add({ path: /^\/v3\/bills\/pgw-/, body: spoil.set(['data', 'status'], 7), times: 1 });
    const billRef = [...s.flw.bills.keys()][0]!;
    await expectShapeRejection(bills.status(billRef), '/data/status');

    // As documented again, every list reads.
    expect(await payments.listCollections(wide)).not.toHaveLength(0);
    expect(await bills.listPayments(wide)).not.toHaveLength(0);
  });
});
