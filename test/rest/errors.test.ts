import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restErrorReply } from '../../src/domain/error-mapping.js';
import { DomainError } from '../../src/domain/errors.js';
import { createTestApp, graphql, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

describe('error bodies', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp({ config: { BODY_LIMIT_BYTES: 8192, REST_BODY_LIMIT_BYTES: 2048 } });
    tenant = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  const post = (url: string, payload: string | object, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.FULL_ACCESS, ...headers },
    });

  it('unknown route → 404 general body', async () => {
    const response = await t.app.inject({ url: '/api/v1/nowhere?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ statusCode: 404, message: 'Cannot GET /api/v1/nowhere', error: 'Not Found' });
  });

  it('malformed JSON → 400 general body', async () => {
    const response = await post('/api/v1/api-keys', '{"name": ');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(response.json().message).toMatch(/not valid JSON/);
  });

  it("body over the route's limit → 413 (REST routes 2 KiB here, /graphql 8 KiB)", async () => {
    const response = await post('/api/v1/api-keys', { name: 'x'.repeat(4096) });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
    const graphqlOk = await post('/graphql', { query: `{ me { id } } # ${'x'.repeat(4096)}` });
    expect(graphqlOk.statusCode).toBe(200);
    const graphqlTooBig = await post('/graphql', { query: `{ me { id } } # ${'x'.repeat(9000)}` });
    expect(graphqlTooBig.statusCode).toBe(413);
  });

  it('bad input names the field, in the message and in details', async () => {
    const wrongType = await post('/api/v1/api-keys', { name: 5 });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'Invalid body: name must be a string.',
      details: [{ field: 'name', message: 'name must be a string' }],
    });
    const missing = await post('/api/v1/api-keys', {});
    expect(missing.json().details).toEqual([{ field: 'name', message: 'name is required' }]);
    const badEnum = await post('/api/v1/api-keys', { name: 'k', permission: 'ROOT' });
    expect(badEnum.json().details[0].field).toBe('permission');
    const badQuery = await t.app.inject({
      url: '/api/v1/events?limit=abc',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(badQuery.statusCode).toBe(400);
    expect(badQuery.json().message).toBe('Invalid query: limit must be an integer.');
    const tooMany = await t.app.inject({
      url: '/api/v1/events?limit=1000',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(tooMany.json().details[0]).toEqual({ field: 'limit', message: 'limit must be between 1 and 200' });
  });

  it('401 and 403 use the general body', async () => {
    const unauthorized = await t.app.inject({ url: '/api/v1/user/me' });
    expect(unauthorized.json()).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.stringMatching(/X-API-KEY/),
    });
    const forbidden = await t.app.inject({ url: '/api/v1/api-keys', headers: { 'x-api-key': tenant.keys.READ_ONLY } });
    expect(forbidden.json()).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      message: expect.stringMatching(/Account Management or Full Access/),
    });
  });

  it('anything unexpected → 500 general body with no internals, over REST and GraphQL', async () => {
    const app = await createTestApp();
    app.services.users.usersByIds = async () => {
      throw new Error('connection to 10.0.0.5 failed: password=hunter2');
    };
    const rest = await app.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': tenant.keys.READ_ONLY } });
    expect(rest.statusCode).toBe(500);
    expect(rest.json()).toEqual({ statusCode: 500, message: 'Internal server error.', error: 'Internal Server Error' });
    const gql = await graphql(app.app, tenant.keys.READ_ONLY, '{ me { id } }');
    expect(gql.body.errors?.[0]).toMatchObject({
      message: 'Internal server error.',
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(JSON.stringify(gql.body)).not.toMatch(/hunter2|10\.0\.0\.5|stacktrace/);
    await app.close();
  });

  it('GraphQL errors carry extensions.code and no stack traces outside development', async () => {
    const invalid = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { nope } }');
    expect(invalid.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(invalid.body)).not.toContain('stacktrace');
    const badArg = await graphql(t.app, tenant.keys.READ_ONLY, '{ events(first: 0) { endSeq } }');
    expect(badArg.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first' });
  });

  it('the rate-limit and bill-not-found bodies have the seed shapes', () => {
    const limited = restErrorReply(
      new DomainError('RATE_LIMITED', 'Too many requests; retry in 30 seconds.', { retryAfter: 29.2 }),
    );
    expect(limited).toEqual({
      status: 429,
      headers: { 'retry-after': '30' },
      body: { statusCode: 429, message: 'Too many requests; retry in 30 seconds.', retryAfter: 30 },
    });
    const bill = restErrorReply(
      new DomainError('BILL_NOT_FOUND', 'Bill transaction not found.', { reference: 'BILL-123' }),
    );
    expect(bill).toEqual({
      status: 404,
      headers: {},
      body: {
        success: false,
        message: 'Bill transaction not found.',
        errorCode: 'BILL_NOT_FOUND',
        reference: 'BILL-123',
      },
    });
  });

  it("echoes the caller's X-Request-Id, or makes one", async () => {
    const given = await t.app.inject({ url: '/api/v1', headers: { 'x-request-id': 'partner-req-42' } });
    expect(given.headers['x-request-id']).toBe('partner-req-42');
    const made = await t.app.inject({ url: '/api/v1', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
