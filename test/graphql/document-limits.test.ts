import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const MAX_TOKENS = 40;

/** `{ me { id id … } }` has 5 tokens plus one per `id`. */
const documentOfTokens = (tokens: number) => `{ me { ${'id '.repeat(tokens - 5)}} }`;

describe('GraphQL document limits answer HTTP 400, never 500', () => {
  let t: TestApp;
  let tenant: Tenant;
  let wsUrl: string;
  beforeAll(
    async () =>
      ({ t, tenant, wsUrl } = await startTestApp({
        listen: true,
        config: {
          GRAPHQL_MAX_TOKENS: MAX_TOKENS,
          GRAPHQL_MAX_DEPTH: 2,
          GRAPHQL_MAX_ALIASES: 3,
          GRAPHQL_MAX_DIRECTIVES: 3,
          GRAPHQL_MAX_COST: 1000,
        },
      })),
  );
  afterAll(() => t.close());

  it('a document at the token limit runs; one token over → 400 GRAPHQL_PARSE_FAILED', async () => {
    const atLimit = await graphql(t.app, tenant.keys.READ_ONLY, documentOfTokens(MAX_TOKENS));
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.data?.me.id).toBe(tenant.user.id);
    const over = await graphql(t.app, tenant.keys.READ_ONLY, documentOfTokens(MAX_TOKENS + 1));
    expect(over.status).toBe(400);
    expect(over.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(over.body.errors?.[0]?.message).toMatch(/more tha\w? 40 tokens/);
  });

  it('a syntax error → 400 GRAPHQL_PARSE_FAILED', async () => {
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { id ');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it.each([
    ['depth', '{ offrampOrders { orders { recipient { __typename } } } }'],
    ['aliases', '{ a: me { id } b: me { id } c: me { id } d: me { id } }'],
    ['directives', '{ me @skip(if: false) @skip(if: false) @skip(if: false) @skip(if: false) { id } }'],
  ])('over the %s limit → 400 GRAPHQL_VALIDATION_FAILED', async (_limit, query) => {
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, query);
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('a subscription POSTed over HTTP → 400 telling the client to use the WebSocket', async () => {
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, 'subscription { events { id } }');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toMatch(/WebSocket/);
  });

  it('over the WebSocket, the same limits are error messages with extensions.code; the socket stays open', async () => {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    const run = (query: string) =>
      new Promise<{ data?: any; errors?: any[] }>((resolve) =>
        client.subscribe(
          { query },
          { next: (r) => resolve(r as any), error: (e) => resolve({ errors: e as any[] }), complete: () => undefined },
        ),
      );
    try {
      const over = await run(documentOfTokens(MAX_TOKENS + 1));
      expect(over.errors?.[0]?.extensions).toEqual({ code: 'GRAPHQL_PARSE_FAILED', http: { status: 400 } });
      const invalid = await run('{ me { nope } }');
      expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
      const forbidden = await run('{ apiKeys { id } }');
      expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', http: { status: 403 } });
      expect(forbidden.errors?.[0]?.extensions.stacktrace).toBeUndefined();
      const fine = await run(documentOfTokens(MAX_TOKENS));
      expect(fine.data?.me.id).toBe(tenant.user.id);
    } finally {
      await client.dispose();
    }
  });
});

describe('the cost limit', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => ({ t, tenant } = await startTestApp({ config: { GRAPHQL_MAX_COST: 5 } })));
  afterAll(() => t.close());

  it('an operation over the cost limit → 400 GRAPHQL_VALIDATION_FAILED', async () => {
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { id email name firstName lastName } }');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(body.errors?.[0]?.message).toMatch(/cost/i);
  });
});
