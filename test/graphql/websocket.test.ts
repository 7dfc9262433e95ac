import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

describe('graphql-ws on /graphql', () => {
  let t: TestApp;
  let tenant: Tenant;
  let url: string;
  beforeAll(async () => ({ t, tenant, wsUrl: url } = await startTestApp({ listen: true })));
  afterAll(() => t.close());

  const run = (connectionParams: Record<string, unknown>, query: string, headers?: Record<string, string>) => {
    const client = createClient({
      url,
      connectionParams,
      webSocketImpl: headers
        ? class extends WebSocket {
            constructor(address: string, protocols?: string | string[]) {
              super(address, protocols, { headers });
            }
          }
        : WebSocket,
      retryAttempts: 0,
    });
    return new Promise<{ data?: any; errors?: any[] }>((resolve, reject) => {
      let result: { data?: any; errors?: any[] } = {};
      client.subscribe(
        { query },
        { next: (value) => (result = value as typeof result), error: reject, complete: () => resolve(result) },
      );
    }).finally(() => client.dispose());
  };

  it('authenticates with connectionParams in any of the accepted spellings', async () => {
    for (const params of [
      { 'X-API-KEY': tenant.keys.READ_ONLY },
      { apiKey: tenant.keys.READ_ONLY },
      { authorization: `Bearer ${tenant.keys.READ_ONLY}` },
    ]) {
      const result = await run(params, '{ me { id } }');
      expect(result.data?.me.id).toBe(tenant.user.id);
    }
  });

  it('authenticates with the upgrade request headers', async () => {
    const result = await run({}, '{ me { email } }', { 'x-api-key': tenant.keys.READ_ONLY });
    expect(result.data?.me.email).toBe(tenant.user.email);
  });

  it('applies the same access rules as HTTP', async () => {
    const anonymous = await run({}, '{ me { id } }').catch((errors) => ({ errors }));
    expect(JSON.stringify(anonymous.errors)).toMatch(/UNAUTHENTICATED|Authentication required/);
    const forbidden = await run({ apiKey: tenant.keys.READ_ONLY }, '{ apiKeys { id } }').catch((errors) => ({
      errors,
    }));
    expect(JSON.stringify(forbidden.errors)).toMatch(/needs Account Management or Full Access/);
  });
});
