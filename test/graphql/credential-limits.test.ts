import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

/** A query the gateway's limits (cost 5000, depth 10 by default) let through with room to spare. */
const PROFILE = '{ me { id email firstName lastName phone } }';

describe("a credential's own GraphQL cost and depth limits", () => {
  let t: TestApp;
  let tenant: Tenant;
  let limitedKeyId: string;
  let wsUrl: string;

  const setAccess = (fields: string) =>
    graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { setGraphQLAccess(input: { credential: { kind: API_KEY, id: "${limitedKeyId}" }, ${fields} }) { maxComplexity maxDepth } }`,
    );

  beforeAll(async () => {
    ({ t, tenant, wsUrl } = await startTestApp({ listen: true }));
    const keys = await t.services.apiKeys.list(tenant.user.id);
    limitedKeyId = keys.find((k) => k.permission === 'READ_ONLY' && k.environment === 'sandbox')!.id;
  });
  afterAll(() => t.close());

  it('refuses, with the credential named as the limit, a query the gateway limit allows', async () => {
    const before = await graphql(t.app, tenant.keys.READ_ONLY, PROFILE);
    expect(before.status).toBe(200);
    const set = await setAccess('maxComplexity: 5');
    expect(set.body.data?.setGraphQLAccess).toEqual({ maxComplexity: 5, maxDepth: null });

    const over = await graphql(t.app, tenant.keys.READ_ONLY, PROFILE);
    expect(over.status).toBe(400);
    expect(over.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(over.body.errors?.[0]?.message).toMatch(/Cost limit of 5 exceeded/);
    expect(over.body.errors?.[0]?.message).toContain("This credential's own limit");
    // A cheap query still runs, and another key of the account keeps the gateway's limit.
    expect((await graphql(t.app, tenant.keys.READ_ONLY, '{ apiInfo { version } }')).status).toBe(200);
    expect((await graphql(t.app, tenant.keys.FULL_ACCESS, PROFILE)).status).toBe(200);
  });

  it('holds the depth limit the same way, and 0 goes back to the gateway limits', async () => {
    await setAccess('maxComplexity: 0, maxDepth: 1');
    const deep = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { businesses { id } } }');
    expect(deep.status).toBe(400);
    expect(deep.body.errors?.[0]?.message).toContain("This credential's own limit");
    const back = await setAccess('maxDepth: 0');
    expect(back.body.data?.setGraphQLAccess).toEqual({ maxComplexity: null, maxDepth: null });
    expect((await graphql(t.app, tenant.keys.READ_ONLY, PROFILE)).status).toBe(200);
  });

  it('only tightens: a limit above the gateway limit is refused, naming the field', async () => {
    const { body } = await setAccess('maxComplexity: 5001');
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.extensions.field).toBe('maxComplexity');
    expect(body.errors?.[0]?.message).toContain('5000');
  });

  it('holds operations over the WebSocket to the same limit', async () => {
    await setAccess('maxComplexity: 5, maxDepth: 0');
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    try {
      const result = await new Promise<{ errors?: any[]; data?: any }>((resolve) =>
        client.subscribe(
          { query: PROFILE },
          {
            next: (r) => resolve(r as any),
            error: (e) => resolve({ errors: e as any[] }),
            complete: () => resolve({}),
          },
        ),
      );
      expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(result.errors?.[0]?.message).toContain("This credential's own limit");
    } finally {
      await client.dispose();
      await setAccess('maxComplexity: 0');
    }
  });
});
