import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { REDIRECT_URI, registerApp } from '../helpers/oauth-flow.js';

const GLOBAL_ORIGIN = 'https://partner.example';
const APP_ORIGIN = 'https://budget-buddy.example';
const OTHER_APP_ORIGIN = 'https://other-app.example';

describe('Connect apps: browser origins per app, and trusted documents for their tokens', () => {
  let t: TestApp;
  let tenant: Tenant;
  let app: { id: string };
  let token: string;
  let bareToken: string;

  /** An access token of the app for the tenant, as /connect/token would issue it. */
  const tokenOf = async (client: Awaited<ReturnType<typeof registerApp>>['client']) => {
    const code = await t.services.authorizationServer.issueCode(
      { client, redirectUri: REDIRECT_URI, scopes: ['read'], state: undefined, codeChallenge: undefined },
      tenant.user.id,
    );
    return (await t.services.authorizationServer.redeemCode(client, { code, redirectUri: REDIRECT_URI })).access_token;
  };

  const setAccess = (id: string, fields: string) =>
    graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { setGraphQLAccess(input: { credential: { kind: CONNECT_APP, id: "${id}" }, ${fields} }) { allowedOrigins trustedDocumentsOnly } }`,
    );

  const call = (credential: { bearer?: string; key?: string }, origin: string, query = '{ me { id } }') =>
    t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        'content-type': 'application/json',
        origin,
        ...(credential.bearer ? { authorization: `Bearer ${credential.bearer}` } : {}),
        ...(credential.key ? { 'x-api-key': credential.key } : {}),
      },
      payload: { query },
    });

  const preflight = (origin: string) =>
    t.app.inject({
      method: 'OPTIONS',
      url: '/graphql',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });

  beforeAll(async () => {
    ({ t, tenant } = await startTestApp({ config: { CORS_ORIGINS: GLOBAL_ORIGIN } }));
    const registered = await registerApp(t.services, tenant.user.id);
    app = registered.client;
    token = await tokenOf(registered.client);
    const set = await setAccess(app.id, `allowedOrigins: ["${APP_ORIGIN}"]`);
    expect(set.body.data?.setGraphQLAccess.allowedOrigins).toEqual([APP_ORIGIN]);
    // An app without origins of its own: the gateway's list applies to its tokens.
    const bare = await registerApp(t.services, tenant.user.id, { name: 'No Origins' });
    bareToken = await tokenOf(bare.client);
    const other = await registerApp(t.services, tenant.user.id, { name: 'Other App' });
    await setAccess(other.client.id, `allowedOrigins: ["${OTHER_APP_ORIGIN}"]`);
  });
  afterAll(() => t.close());

  it("answers preflights for the gateway's origins and every app's, none other (a preflight has no credential)", async () => {
    for (const origin of [GLOBAL_ORIGIN, APP_ORIGIN, OTHER_APP_ORIGIN]) {
      const response = await preflight(origin);
      expect(response.headers['access-control-allow-origin']).toBe(origin);
      expect(String(response.headers['access-control-allow-headers'])).toMatch(/authorization/);
    }
    expect((await preflight('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it("lets a browser read an app token's answer only from that app's origins", async () => {
    const allowed = await call({ bearer: token }, APP_ORIGIN);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().data.me.id).toBe(tenant.user.id);
    expect(allowed.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it("refuses an app token sent from another app's origin, or the gateway's, before anything runs", async () => {
    for (const origin of [OTHER_APP_ORIGIN, GLOBAL_ORIGIN]) {
      const refused = await call({ bearer: token }, origin);
      const body = refused.json();
      expect(body.data).toBeNull();
      expect(body.errors[0].extensions.code).toBe('ORIGIN_NOT_ALLOWED');
      expect(body.errors[0].message).toContain(origin);
    }
    // Another app's origin: the browser is not even let read the refusal.
    expect((await call({ bearer: token }, OTHER_APP_ORIGIN)).headers['access-control-allow-origin']).toBeUndefined();
    // A server's call (no Origin) is not a browser's: it runs.
    const server = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: { query: '{ me { id } }' },
    });
    expect(server.json().data.me.id).toBe(tenant.user.id);
  });

  it("keeps the gateway's list for API keys and for apps that registered no origins", async () => {
    const keyFromApp = await call({ key: tenant.keys.READ_ONLY }, APP_ORIGIN);
    expect(keyFromApp.headers['access-control-allow-origin']).toBeUndefined();
    const keyFromGlobal = await call({ key: tenant.keys.READ_ONLY }, GLOBAL_ORIGIN);
    expect(keyFromGlobal.headers['access-control-allow-origin']).toBe(GLOBAL_ORIGIN);
    const bareFromApp = await call({ bearer: bareToken }, APP_ORIGIN);
    expect(bareFromApp.headers['access-control-allow-origin']).toBeUndefined();
    const bareFromGlobal = await call({ bearer: bareToken }, GLOBAL_ORIGIN);
    expect(bareFromGlobal.headers['access-control-allow-origin']).toBe(GLOBAL_ORIGIN);
    expect(bareFromGlobal.json().data.me.id).toBe(tenant.user.id);
  });

  it('refuses origins that are not origins, naming each', async () => {
    const { body } = await setAccess(
      app.id,
      'allowedOrigins: ["https://ok.example/path", "http://insecure.example", "*"]',
    );
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    const fields = (body.errors![0]!.extensions.details as Array<{ field: string }>).map((d) => d.field);
    expect(fields).toEqual(['allowedOrigins[0]', 'allowedOrigins[1]', 'allowedOrigins[2]']);
  });

  it("holds every token of an app with trusted documents to the app's list", async () => {
    const registered = await graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { registerTrustedDocuments(input: { credential: { kind: CONNECT_APP, id: "${app.id}" }, documents: [{ body: "query Me { me { id } }" }] }) { registered } }`,
    );
    expect(registered.body.data?.registerTrustedDocuments.registered).toBe(1);
    await setAccess(app.id, 'trustedDocumentsOnly: true');
    const known = await call({ bearer: token }, APP_ORIGIN, 'query Me { me { id } }');
    expect(known.json().data.me.id).toBe(tenant.user.id);
    const unknown = await call({ bearer: token }, APP_ORIGIN, 'query Profile { me { id email } }');
    expect(unknown.statusCode).toBe(403);
    expect(unknown.json().errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    expect(unknown.json().errors[0].message).toContain('operation "Profile"');
    // The tenant's keys are not held to the app's list.
    expect(
      (await call({ key: tenant.keys.READ_ONLY }, GLOBAL_ORIGIN, 'query Profile { me { id email } }')).statusCode,
    ).toBe(200);
  });
});
