import { describe, expect, it } from 'vitest';
import type { Tenant } from '../helpers/app.js';
import { appOnFakeFlutterwave } from '../helpers/app-on-fake-flutterwave.js';
import { rest } from '../helpers/rest.js';
import { seedTenantWithProductionFunds } from '../helpers/wallet.js';

/** Production bills through the Flutterwave v3 Bills adapter, against a local fake of its API. */
describe('bills on Flutterwave v3 (production)', () => {
  const s = appOnFakeFlutterwave({ apis: 'bills', listen: true });

  const funded = (naira: bigint) => seedTenantWithProductionFunds(s.t.services, naira);
  const balance = async (tenant: Tenant) =>
    (await rest(s.t, tenant.productionKey)('GET', '/api/v1/wallet/balance')).json().data;

  it("reads the catalogue, keeping only the seed's categories", async () => {
    const call = rest(s.t, s.tenant.productionKey);
    expect((await call('GET', '/api/v1/bills/categories')).json().data.map((c: { code: string }) => c.code)).toEqual([
      'AIRTIME',
      'UTILITYBILLS',
    ]);
    expect((await call('GET', '/api/v1/bills/categories/AIRTIME/billers')).json().data).toEqual([
      { billerCode: 'BIL099', name: 'MTN', shortName: 'MTN', category: 'AIRTIME', meterType: null },
    ]);
    expect((await call('GET', '/api/v1/bills/billers/BIL112/items')).json().data).toEqual([
      {
        itemCode: 'UB157',
        billerCode: 'BIL112',
        name: 'IKEDC PREPAID',
        amount: 0,
        fee: 100,
        label: 'Meter Number',
        validityPeriod: null,
      },
    ]);
  });

  it('validates with both code and customer, and reads an HTTP 200 error body as an error', async () => {
    const call = rest(s.t, s.tenant.productionKey);
    const ok = await call('POST', '/api/v1/bills/validate', {
      customer: '45012345678',
      billerCode: 'BIL112',
      itemCode: 'UB157',
    });
    expect(ok.json().data).toMatchObject({ customerName: 'TUNDE BAKARE', minimum: 100, maximum: 100000 });
    expect(s.flw.requests.at(-1)!.path).toBe('/v3/bill-items/UB157/validate?code=BIL112&customer=45012345678');
    const invalid = await call('POST', '/api/v1/bills/validate', {
      customer: '00000000000',
      billerCode: 'BIL112',
      itemCode: 'UB157',
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().message).toContain('customer');
  });

  it('pays electricity with its token, refunds a failed payment, and settles a timeout from the signed bill webhook', async () => {
    const tenant = await funded(10_000n);
    const call = rest(s.t, tenant.productionKey);
    const paid = await call('POST', '/api/v1/bills/pay/electricity', {
      meterNumber: '45012345678',
      amount: 2000,
      disco: 'IKEDC',
      reference: 'P-ELEC',
    });
    expect(paid.json().data).toMatchObject({
      status: 'SUCCESS',
      token: '1234-5678-9012-3456-7890',
      units: '40.0 kWh',
      fee: 100,
      customerName: 'TUNDE BAKARE',
    });
    const sent = s.flw.requests.filter((r) => r.path.endsWith('/payment')).at(-1)!;
    expect(sent.path).toBe('/v3/billers/BIL112/items/UB157/payment');
    expect(sent.body).toMatchObject({
      country: 'NG',
      customer_id: '45012345678',
      amount: 2000,
      reference: `pgw-${paid.json().data.id}`,
    });
    const failed = await call('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08000000001',
      biller: 'MTN',
      amount: 500,
    });
    expect(failed.json().data.status).toBe('FAILED');
    expect(await balance(tenant)).toMatchObject({ availableKobo: 1_000_000 - 210_000, heldKobo: 0 });
    const late = await call('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08000000009',
      biller: 'MTN',
      amount: 500,
      reference: 'P-LATE',
    });
    expect(late.json().data.status).toBe('PENDING');
    expect(await balance(tenant)).toMatchObject({ heldKobo: 50_000 });
    const providerRef = `pgw-${late.json().data.id}`;
    expect((await s.flw.notifyBill(s.baseUrl, providerRef, 'forged')).status).toBe(401);
    s.flw.bills.get(providerRef)!['status'] = 'success';
    s.flw.billStatusPath = 'suffixed';
    expect((await s.flw.notifyBill(s.baseUrl, providerRef)).status).toBe(200);
    expect((await call('GET', '/api/v1/bills/records/reference/P-LATE')).json().data.status).toBe('SUCCESS');
    // Flutterwave retries its webhooks: repeats, even concurrent ones, change nothing.
    const settledVersion = (
      await s.t.services.bills.record(
        {
          kind: 'api_key',
          credentialId: 't',
          userId: tenant.user.id,
          environment: 'production',
          abilities: new Set(['READ']),
        },
        'P-LATE',
      )
    ).version;
    expect(
      (await Promise.all([1, 2, 3].map(() => s.flw.notifyBill(s.baseUrl, providerRef)))).map((r) => r.status),
    ).toEqual([200, 200, 200]);
    expect(
      (
        await s.t.services.bills.record(
          {
            kind: 'api_key',
            credentialId: 't',
            userId: tenant.user.id,
            environment: 'production',
            abilities: new Set(['READ']),
          },
          'P-LATE',
        )
      ).version,
    ).toBe(settledVersion);
    expect(await balance(tenant)).toMatchObject({ availableKobo: 1_000_000 - 210_000 - 50_000, heldKobo: 0 });
    s.flw.billStatusPath = 'plain';
  });
});
