import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/principal.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { FormClient } from '../helpers/form-client.js';
import { Mailbox } from '../helpers/mailbox.js';
import { REDIRECT_URI, registerApp, signedInUser } from '../helpers/oauth-flow.js';

/**
 * Each audit record names the request it came from (address, user agent) and who acted, passed
 * explicitly from the request to the audited call: through the request's principal (API keys,
 * dashboard sessions) or as the call's origin (consent, password reset, session account flows).
 */
describe('the audit origin of a change', () => {
  let t: TestApp;
  let tenant: Tenant;
  const mailbox = new Mailbox();
  beforeAll(async () => {
    await mailbox.start();
    t = await createTestApp({ config: { SMTP_URL: mailbox.url } });
    tenant = await seedTenant(t.services);
  });
  afterAll(async () => {
    await t.close();
    await mailbox.stop();
  });

  /** A signed-in person's browser, and its session's id. */
  async function signedIn(ip: string, userAgent: string) {
    const { user, cookie } = await signedInUser(t.services);
    const token = cookie.slice(cookie.indexOf('=') + 1);
    const session = (await t.services.accounts.sessionOf(token))!.session;
    const browser = new FormClient(t.app, ip, userAgent);
    browser.cookies.set('pgw_session', token);
    return { user, browser, sessionId: session.id };
  }

  async function recordsOf(userId: string, action?: string) {
    const reader: Principal = {
      kind: 'session',
      credentialId: 'reader',
      userId,
      environment: 'sandbox',
      abilities: new Set(['READ', 'MANAGE']),
    };
    return (await t.services.auditLog.list(reader, action ? { action } : {}, 200)).records;
  }

  it('names the dashboard session, its address and user agent, for account, key and app changes', async () => {
    const { user, browser, sessionId } = await signedIn('10.20.30.40', 'dashboard-browser/2.0');
    await browser.get('/dashboard/security');
    expect((await browser.post('/dashboard/security/pin', { pin: '2580' })).statusCode).toBe(200);
    await browser.get('/dashboard/keys');
    expect(
      (await browser.post('/dashboard/keys', { name: 'dash', env: 'sandbox', permission: 'READ_ONLY' })).statusCode,
    ).toBe(201);
    const [key] = await t.services.apiKeys.list(user.id);
    expect((await browser.post(`/dashboard/keys/${key!.id}/revoke`)).statusCode).toBe(303);
    await browser.get('/dashboard/apps');
    const registered = await browser.post('/dashboard/apps', {
      name: 'Origin app',
      clientType: 'confidential',
      redirectUris: 'https://app.example.com/cb',
      scopes: ['read'],
    });
    expect(registered.statusCode).toBe(201);
    const [app] = await t.services.oauthClients.list(user.id);
    await browser.get('/dashboard/apps');
    expect((await browser.post(`/dashboard/apps/${app!.id}/delete`)).statusCode).toBe(303);

    const seen = (await recordsOf(user.id)).reverse();
    expect(seen.map((r) => r.action)).toEqual([
      'account.pin_set',
      'api_key.created',
      'api_key.revoked',
      'connect_app.created',
      'connect_app.deleted',
    ]);
    for (const record of seen)
      expect(record, record.action).toMatchObject({
        actorKind: 'session',
        actorId: sessionId,
        ip: '10.20.30.40',
        userAgent: 'dashboard-browser/2.0',
      });
  });

  it('names the consenting session at /connect/authorize, and the one revoking the grant', async () => {
    const owner = await signedInUser(t.services);
    const { client } = await registerApp(t.services, owner.user.id);
    const { user, browser, sessionId } = await signedIn('10.7.7.7', 'consent-browser/3.1');
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'read',
      state: 's1',
    });
    expect((await browser.get(`/connect/authorize?${params}`)).statusCode).toBe(200);
    const consent = browser.lastPage.match(/name="consent" value="([^"]+)"/)![1]!;
    const approved = await browser.post('/connect/authorize', {
      consent,
      client_id: client.clientId,
      decision: 'approve',
    });
    expect(approved.statusCode).toBe(302);
    expect(new URL(approved.headers.location as string).searchParams.get('code')).toBeTruthy();

    const revoker = new FormClient(t.app, '10.8.8.8', 'other-browser/1.0');
    revoker.cookies.set('pgw_session', browser.cookies.get('pgw_session')!);
    await revoker.get('/dashboard/connected-apps');
    expect((await revoker.post(`/dashboard/connected-apps/${client.id}/revoke`)).statusCode).toBe(303);

    const seen = (await recordsOf(user.id)).reverse();
    expect(seen.map((r) => [r.action, r.actorKind, r.actorId, r.ip, r.userAgent])).toEqual([
      ['connect_grant.approved', 'session', sessionId, '10.7.7.7', 'consent-browser/3.1'],
      ['connect_grant.revoked', 'session', sessionId, '10.8.8.8', 'other-browser/1.0'],
    ]);
  });

  it('keeps a bounded piece of a huge user agent', async () => {
    const answer = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      remoteAddress: '192.0.2.77',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'user-agent': `huge/${'x'.repeat(10_000)}` },
      payload: { name: `huge-agent-${randomUUID().slice(0, 8)}` },
    });
    expect(answer.statusCode, answer.body).toBe(201);
    const record = (await recordsOf(tenant.user.id)).find((r) => r.targetId === answer.json().data.apiKey.id)!;
    expect(record.ip).toBe('192.0.2.77');
    expect(record.userAgent!.startsWith('huge/xxx')).toBe(true);
    expect(record.userAgent!.length).toBeLessThanOrEqual(512);
  });

  it('names no one but the address and user agent of a password reset by emailed link', async () => {
    const { user } = await signedIn('10.1.2.3', 'unused');
    await t.services.accounts.requestPasswordReset(user.email);
    const mail = await mailbox.waitFor(user.email, /Reset your/);
    const token = new URL(Mailbox.linkIn(mail), 'http://x').searchParams.get('token')!;
    const browser = new FormClient(t.app, '10.4.5.6', 'reset-browser/9');
    await browser.get(`/reset-password?token=${token}`);
    expect((await browser.post('/reset-password', { token, password: 'yet another horse' })).statusCode).toBe(200);
    const [record] = await recordsOf(user.id, 'account.password_reset');
    expect(record).toMatchObject({
      actorKind: 'anonymous',
      actorId: null,
      ip: '10.4.5.6',
      userAgent: 'reset-browser/9',
    });
  });

  it("names each API-key request's own address and user agent (REST and GraphQL), the cached key untouched", async () => {
    const keyId = (await t.services.apiKeys.authenticate(tenant.keys.FULL_ACCESS))!.credentialId;
    const rest = (ip: string, userAgent: string, name: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        remoteAddress: ip,
        headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'user-agent': userAgent },
        payload: { name },
      });
    const graphql = (ip: string, userAgent: string, url: string) =>
      t.app.inject({
        method: 'POST',
        url: '/graphql',
        remoteAddress: ip,
        headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'user-agent': userAgent, 'content-type': 'application/json' },
        payload: {
          query: `mutation { createWebhookEndpoint(input: { url: "${url}", eventTypes: ["deposit.completed"] }) { endpoint { id } } }`,
        },
      });
    // At once, through one principal (its cache emptied first, so all four share one lookup's
    // answer): each record keeps its own request's origin.
    t.services.apiKeys.forget(keyId);
    const suffix = randomUUID().slice(0, 8);
    const answers = await Promise.all([
      rest('192.0.2.1', 'rest-client/1', `one-${suffix}`),
      rest('192.0.2.2', 'rest-client/2', `two-${suffix}`),
      graphql('192.0.2.3', 'gql-client/3', `https://hooks.example.com/${suffix}/3`),
      graphql('192.0.2.4', 'gql-client/4', `https://hooks.example.com/${suffix}/4`),
    ]);
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(answer.json().data?.key ? 201 : 200);
    const keyIds = answers.slice(0, 2).map((a) => a.json().data.apiKey.id as string);
    const endpointIds = answers.slice(2).map((a) => a.json().data.createWebhookEndpoint.endpoint.id as string);
    const records = await recordsOf(tenant.user.id);
    const of = (targetId: string) => records.find((r) => r.targetId === targetId)!;
    const expected = [
      [keyIds[0]!, 'api_key.created', '192.0.2.1', 'rest-client/1'],
      [keyIds[1]!, 'api_key.created', '192.0.2.2', 'rest-client/2'],
      [endpointIds[0]!, 'webhook_endpoint.created', '192.0.2.3', 'gql-client/3'],
      [endpointIds[1]!, 'webhook_endpoint.created', '192.0.2.4', 'gql-client/4'],
    ] as const;
    for (const [targetId, action, ip, userAgent] of expected)
      expect(of(targetId)).toMatchObject({ action, actorKind: 'api_key', actorId: keyId, ip, userAgent });

    // REST revocation: the revoking key is the actor (no principal reached revoke before).
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${keyIds[0]}`,
      remoteAddress: '192.0.2.9',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'user-agent': 'rest-client/9' },
    });
    expect(revoked.statusCode).toBe(200);
    const [revocation] = await recordsOf(tenant.user.id, 'api_key.revoked');
    expect(revocation).toMatchObject({
      targetId: keyIds[0],
      actorKind: 'api_key',
      actorId: keyId,
      ip: '192.0.2.9',
      userAgent: 'rest-client/9',
    });

    // The key's principal is cached across requests: no request's origin is left on it.
    expect((await t.services.apiKeys.authenticate(tenant.keys.FULL_ACCESS))!.origin).toBeUndefined();
  });

  it('records a change made with no request (as the admin CLI makes) as the system', async () => {
    const { apiKey } = await t.services.apiKeys.create({
      userId: tenant.user.id,
      name: 'cli',
      environment: 'sandbox',
    });
    await t.services.apiKeys.revoke(tenant.user.id, apiKey.id);
    const records = (await recordsOf(tenant.user.id)).filter((r) => r.targetId === apiKey.id);
    expect(records.map((r) => [r.action, r.actorKind, r.actorId, r.ip, r.userAgent])).toEqual([
      ['api_key.revoked', 'system', null, null, null],
      ['api_key.created', 'system', null, null, null],
    ]);
  });
});
