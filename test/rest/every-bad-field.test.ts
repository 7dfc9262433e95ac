import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, graphql, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

/**
 * A request with several bad fields is answered once, naming each of them, in `details` and in
 * the message, whether a field is refused by the route's schema or by the operation's own rules
 * (a decimal too fine for kobo, an unknown bank, a reserved reference): the partner fixes them all
 * in one try.
 */
const CASES: Array<{ name: string; method?: 'POST' | 'GET'; url: string; body?: object; fields: string[] }> = [
  {
    name: 'withdraw: amount zero and a short account number',
    url: '/api/v1/wallet/withdraw',
    body: { amount: 0, bankCode: '044', accountNumber: '123' },
    fields: ['amount', 'accountNumber'],
  },
  {
    name: 'withdraw: kobo fractions, a reserved reference, a short account number, an unknown bank',
    url: '/api/v1/wallet/withdraw',
    body: { amount: 100.555, bankCode: '999999', accountNumber: '123', reference: 'VA-mine' },
    fields: ['amount', 'reference', 'accountNumber', 'bankCode'],
  },
  {
    name: 'transfer: kobo fractions, a reserved reference, a blank recipient',
    url: '/api/v1/wallet/transfer',
    body: { amount: 1.234, recipient: '   ', reference: 'VA-x' },
    fields: ['amount', 'reference', 'recipient'],
  },
  {
    name: 'bank-transfer deposit: kobo fractions and a reserved reference',
    url: '/api/v1/wallet/deposits/bank-transfer',
    body: { amount: 1.234, reference: 'VA-x' },
    fields: ['amount', 'reference'],
  },
  {
    name: 'payment-link deposit: amount zero and no redirectUrl',
    url: '/api/v1/wallet/deposits/payment-link',
    body: { amount: 0 },
    fields: ['amount', 'redirectUrl'],
  },
  {
    name: 'USSD deposit: kobo fractions and an unknown bank',
    url: '/api/v1/wallet/deposits/ussd',
    body: { amount: 1.001, bankCode: '999999' },
    fields: ['amount', 'bankCode'],
  },
  {
    name: 'airtime: not a phone number, an unknown biller, kobo fractions, a reserved reference',
    url: '/api/v1/bills/pay/airtime',
    body: { phoneNumber: '123', biller: 'NOPE', amount: 100.001, reference: 'VA-x' },
    fields: ['phoneNumber', 'biller', 'amount', 'reference'],
  },
  {
    name: 'bank account resolution: a short account number and a blank bank',
    url: '/api/v1/offramp/payouts/verify-account',
    body: { institution: ' ', accountNumber: '1' },
    fields: ['accountNumber', 'institution'],
  },
  {
    name: 'SOL transfer: not an address, amount zero, an unknown network',
    url: '/api/v1/solana/transfer-sol',
    body: { to: 'not-an-address', amount: '0', network: 'moonnet' },
    fields: ['to', 'amount', 'network'],
  },
  {
    name: 'webhook endpoint: not an http(s) URL and an unknown event kind',
    url: '/api/v1/webhooks',
    body: { url: 'ftp://example.com/hook', eventTypes: ['wallet.nothing'] },
    fields: ['url', 'eventTypes.0'],
  },
  {
    name: 'offramp order: a bad reference, a short account number, no account name, a refund address of another network',
    url: '/api/v1/offramp/exchange/orders',
    body: {
      token: 'USDT',
      network: 'base',
      amount: '-5',
      fiat: 'NGN',
      reference: 'has space',
      refundAddress: 'not-an-address',
      recipient: { institution: 'GTBINGLA', accountNumber: '1', accountName: ' ' },
    },
    fields: ['amount', 'reference', 'recipient.accountNumber', 'recipient.accountName', 'refundAddress'],
  },
  {
    name: 'cable: no item, amount zero (the schema) and a short smartcard number (the bill rules)',
    url: '/api/v1/bills/pay/cable',
    body: { smartcardNumber: '12', biller: 'DSTV', amount: 0 },
    fields: ['itemCode', 'amount', 'smartcardNumber'],
  },
  {
    name: 'payment method: a short account number and an unknown bank',
    url: '/api/v1/payment-methods',
    body: { type: 'bank_account', bankAccount: { bankCode: '999999', accountNumber: '1' } },
    fields: ['bankAccount.accountNumber', 'bankAccount.bankCode'],
  },
];

describe('every bad field named at once', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp();
    tenant = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  for (const c of CASES) {
    it(c.name, async () => {
      const response = await t.app.inject({
        method: c.method ?? 'POST',
        url: c.url,
        headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.FULL_ACCESS },
        ...(c.body ? { payload: c.body } : {}),
      });
      const body = response.json() as { message: string; details?: Array<{ field: string; message: string }> };
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      const named = [...new Set((body.details ?? []).map((d) => d.field))];
      expect(named.sort(), JSON.stringify(body)).toEqual([...c.fields].sort());
      for (const field of c.fields) expect(body.message).toContain(field);
    });
  }

  it('GraphQL names them at once too, in extensions.details', async () => {
    const { body } = await graphql(
      t.app,
      tenant.keys.FULL_ACCESS,
      'mutation ($input: WithdrawInput!) { withdraw(input: $input) { reference } }',
      { input: { amount: 100.555, bankCode: '999999', accountNumber: '123', reference: 'VA-mine' } },
    );
    const [error] = body.errors ?? [];
    expect(error?.extensions.code).toBe('BAD_USER_INPUT');
    expect(error?.extensions.details.map((d: { field: string }) => d.field)).toEqual([
      'amount',
      'reference',
      'accountNumber',
      'bankCode',
    ]);
  });

  it('a keyed request refused for several fields replays the very same refusal', async () => {
    const key = `swap-${crypto.randomUUID()}`;
    const swap = async () =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: {
            'content-type': 'application/json',
            'x-api-key': tenant.keys.FULL_ACCESS,
            'idempotency-key': key,
          },
          payload: {
            query: 'mutation ($input: SwapInput!) { swapTokens(input: $input) { signature } }',
            variables: { input: { outputMint: 'So11111111111111111111111111111111111111112' } },
          },
        })
      ).json();
    const first = await swap();
    expect(first.errors[0].extensions.details.map((d: { field: string }) => d.field)).toEqual(['inputMint', 'amount']);
    expect(await swap()).toEqual(first);
  });

  it('a body too far off to read field by field gets the schema refusal alone', async () => {
    for (const payload of ['null', '[1,2]', '"text"', '{"recipient": null, "reference": 5}']) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/offramp/exchange/orders',
        headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.FULL_ACCESS },
        payload,
      });
      expect(response.statusCode, payload).toBe(400);
      expect(response.json().details.length, payload).toBeGreaterThan(0);
    }
  });
});
