import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { badTextReason, findBadText } from '../../src/http/text-hygiene.js';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

/** Runs on PGlite and, with DATABASE_URL set, on PostgreSQL (where NUL in text used to be a 500). */
describe('NUL and unpaired surrogates are refused at every boundary', () => {
  let t: TestApp;
  let tenant: Tenant;
  let wsUrl: string;
  beforeAll(async () => ({ t, tenant, wsUrl } = await startTestApp({ listen: true })));
  afterAll(() => t.close());

  const headers = () => ({ 'x-api-key': tenant.keys.FULL_ACCESS, 'content-type': 'application/json' });
  const expectRefused = (response: { statusCode: number; json(): any }, field: string) => {
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', details: [{ field }] });
    expect(body.message).toContain(field);
    expect(JSON.stringify(body)).not.toContain('\\u0000');
  };

  it('NUL in a REST path parameter → 400 naming it', async () => {
    expectRefused(await t.app.inject({ url: '/api/v1/transactions/abc%00def', headers: headers() }), 'id');
  });

  it('NUL in a REST query parameter → 400 naming it', async () => {
    expectRefused(await t.app.inject({ url: '/api/v1/transactions?search=a%00b', headers: headers() }), 'search');
  });

  it('NUL and lone surrogates in a REST body, at any depth → 400 naming the field', async () => {
    expectRefused(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: headers(),
        payload: { name: 'a\u0000b' },
      }),
      'name',
    );
    expectRefused(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: headers(),
        payload: '{"name":"key \\ud800 one"}',
      }),
      'name',
    );
    expectRefused(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/wallet/deposits/bank-transfer',
        headers: headers(),
        payload: { amount: 100, meta: { order: { lines: ['ok', 'x\udc00'] } } },
      }),
      'meta.order.lines.1',
    );
  });

  it('NUL in a header read as data (Idempotency-Key) → 400 naming the header', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { ...headers(), 'idempotency-key': 'key\u0000' },
      payload: { name: 'k' },
    });
    expectRefused(response, 'Idempotency-Key');
  });

  it('NUL in a GraphQL variable → BAD_USER_INPUT with extensions.field, HTTP 400', async () => {
    const { status, body } = await graphql(
      t.app,
      tenant.keys.FULL_ACCESS,
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
      { input: { name: 'a\u0000' } },
    );
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'variables.input.name' });
    const surrogate = await graphql(t.app, tenant.keys.FULL_ACCESS, 'query ($s: ID!) { user(id: $s) { id } }', {
      s: '\udbff',
    });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'variables.s' });
  });

  it('NUL written inline in the document ("\\u0000" escape) → BAD_USER_INPUT naming the argument', async () => {
    const { status, body } = await graphql(
      t.app,
      tenant.keys.FULL_ACCESS,
      'mutation { createApiKey(input: { name: "a\\u0000b" }) { key } }',
    );
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.name' });
  });

  it('NUL in variables sent with GET /graphql (JSON-escaped in the URL) → 400', async () => {
    const query = encodeURIComponent('query ($s: ID!) { user(id: $s) { id } }');
    const variables = encodeURIComponent('{"s":"\\u0000"}');
    const response = await t.app.inject({
      url: `/graphql?query=${query}&variables=${variables}`,
      headers: { 'x-api-key': tenant.keys.READ_ONLY, 'apollo-require-preflight': 'true' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'variables.s' });
  });

  it('NUL in a variable over the WebSocket → an error message with BAD_USER_INPUT, the socket stays usable', async () => {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    try {
      const errors = await new Promise<any[]>((resolve, reject) =>
        client.subscribe(
          { query: 'query ($s: ID!) { user(id: $s) { id } }', variables: { s: 'a\u0000' } },
          { next: () => reject(new Error('answered')), error: (e) => resolve(e as any[]), complete: () => undefined },
        ),
      );
      expect(errors[0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'variables.s',
        http: { status: 400 },
      });
      const me = await new Promise<any>((resolve, reject) =>
        client.subscribe({ query: '{ me { id } }' }, { next: resolve, error: reject, complete: () => undefined }),
      );
      expect(me.data.me.id).toBe(tenant.user.id);
    } finally {
      await client.dispose();
    }
  });
});

describe('the text scan', () => {
  it('accepts paired surrogates (emoji) and refuses each lone half', () => {
    expect(badTextReason('naira 🙂')).toBeUndefined();
    expect(badTextReason('\ud83d')).toMatch(/surrogate/);
    expect(badTextReason('\ude42x')).toMatch(/surrogate/);
    expect(badTextReason('a\u0000')).toMatch(/NUL/);
  });

  it('finds bad text in keys and at a depth that would overflow a recursive walk', () => {
    expect(findBadText({ ok: { ['bad\u0000key']: 1 } })).toMatchObject({ field: 'ok' });
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findBadText(deep)?.field.split('.').length).toBe(200_000);
  });
});
