import Fastify from 'fastify';
import { buildSchema } from 'graphql';
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restInputError } from '../../src/rest/graphql-input-errors.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { restContractStats, restContractViolations, watchRestContract } from '../helpers/rest-contract.js';

describe('REST 400s speak REST', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp();
    tenant = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  const send = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });

  it('an enum error lists the allowed values (and the suite-wide watch reads the answer)', async () => {
    const checkedBefore = restContractStats.checked;
    const response = await send('GET', '/api/v1/bills/records?status=DONE');
    expect(restContractStats.checked).toBe(checkedBefore + 1);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([
      { field: 'status', message: 'status must be one of PENDING, SUCCESS, FAILED' },
    ]);
  });

  it('an unknown body field or query parameter is named', async () => {
    const body = await send('POST', '/api/v1/api-keys', { name: 'k', colour: 'blue' });
    expect(body.statusCode).toBe(400);
    expect(body.json()).toMatchObject({
      message: 'Invalid body: colour is not a known field.',
      details: [{ field: 'colour', message: 'colour is not a known field' }],
    });
    const query = await send('GET', '/api/v1/bills/records?colour=blue');
    expect(query.json().details).toEqual([{ field: 'colour', message: 'colour is not a known query parameter' }]);
  });

  it('a number beyond the range states the range', async () => {
    const response = await send('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 20_000_000 });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([
      { field: 'amount', message: 'amount must be greater than 0 and at most 10000000' },
    ]);
    const page = await send('GET', '/api/v1/bills/records?limit=0');
    expect(page.json().details[0].message).toMatch(/^limit must be between 1 and \d+$/);
  });

  it('validation comes before lookups: a negative amount with an unknown payment method is a 400', async () => {
    const response = await send('POST', '/api/v1/wallet/deposit/payment-method', {
      amount: -5,
      paymentMethodId: '00000000-0000-4000-8000-000000000000',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details[0].field).toBe('amount');
  });

  it('a wrong type never echoes the value sent (a card number stays out of the answer)', async () => {
    const response = await send('POST', '/api/v1/wallet/deposit/payment-method', {
      amount: 100,
      paymentMethodId: 4111111111111111,
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).not.toContain('4111111111111111');
    expect(response.json().details).toEqual([
      { field: 'paymentMethodId', message: 'paymentMethodId must be a string' },
    ]);
  });

  it('malformed JSON is refused without quoting the body', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'content-type': 'application/json' },
      payload: '{"cardNumber": 4111111111111111, cvv: 123}',
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).not.toMatch(/4111|cvv|123/);
    expect(response.json().details).toEqual([{ field: 'body', message: expect.stringMatching(/not valid JSON/) }]);
  });

  it.each([
    ['Read Only', 'READ_ONLY'],
    ['Transactions', 'TRANSACTIONS'],
    ['Account Management', 'ACCOUNT_MANAGEMENT'],
    ['Full Access', 'FULL_ACCESS'],
    ['FULL_ACCESS', 'FULL_ACCESS'],
  ])('the permission label %s is accepted beside the enum names', async (label, level) => {
    const response = await send('POST', '/api/v1/api-keys', { name: `labelled ${label}`, permission: label });
    expect(response.statusCode).toBe(201);
    expect(response.json().data.apiKey.permission).toBe(level);
  });

  it('a bad permission lists both spellings', async () => {
    const response = await send('POST', '/api/v1/api-keys', { name: 'k', permission: 'Root' });
    expect(response.json().details[0].message).toBe(
      'permission must be one of READ_ONLY, TRANSACTIONS, ACCOUNT_MANAGEMENT, FULL_ACCESS, Read Only, Transactions, Account Management, Full Access',
    );
  });
});

describe("the executor's input errors in REST words", () => {
  const schema = buildSchema(`
    enum Level { LOW HIGH }
    input ChargeInput { cardNumber: String! cvv: String! level: Level amount: Int }
    type Query { charge(input: ChargeInput!): Boolean }
  `);
  const cases: Array<[string, string, string]> = [
    [
      'Variable "$input" got invalid value { cardNumber: "4111111111111111", cvv: "123", colour: "x" }; Field "colour" is not defined by type "ChargeInput".',
      'colour',
      'colour is not a known field',
    ],
    [
      'Variable "$input" got invalid value "9.5" at "input.amount"; Int cannot represent non-integer value: "9.5"',
      'amount',
      'amount must be an integer',
    ],
    [
      'Variable "$input" got invalid value "MID" at "input.level"; Value "MID" does not exist in "Level" enum.',
      'level',
      'level must be one of LOW, HIGH',
    ],
    [
      'Variable "$input" got invalid value { cardNumber: "4111111111111111" }; Field "cvv" of required type "String!" was not provided.',
      'cvv',
      'cvv is required',
    ],
    ['Variable "$id" of required type "ID!" was not provided.', 'id', 'id is required'],
  ];
  it.each(cases)('%s', (message, field, expected) => {
    const error = restInputError(new GraphQLError(message), schema);
    expect(error.field).toBe(field);
    expect(error.details).toEqual([{ field, message: expected }]);
    expect(error.message).not.toMatch(/Variable|\$|ChargeInput|cannot represent|4111|123/);
  });
});

describe('the suite-wide REST contract watch', () => {
  it('records a REST 400 that carries GraphQL text, whichever test sent it', async () => {
    const app = Fastify();
    watchRestContract(app);
    app.get('/api/v1/leaky', async (_request, reply) =>
      reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: 'Variable "$input" got invalid value' }),
    );
    await app.inject({ url: '/api/v1/leaky' });
    await app.close();
    const recorded = restContractViolations.splice(0);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatch(/GraphQL text .* in GET \/api\/v1\/leaky/);
  });
});
