import { createClient } from 'graphql-ws';
import * as oauth from 'oauth4webapi';
import WebSocket from 'ws';
import { waitUntil } from '../helpers/wait.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenResponse } from '../../src/domain/connect/authorization-server.js';
import { ManualClock } from '../../src/domain/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { consent, insecure, REDIRECT_URI, registerApp, signedInUser } from '../helpers/oauth-flow.js';

describe('Connect: OAuth 2 authorization code flow, checked with oauth4webapi', () => {
  let t: TestApp;
  let base: string;
  let as: oauth.AuthorizationServer;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    ({ t, baseUrl: base } = await startTestApp({
      listen: true,
      clock,
      config: { CONNECT_TOKEN_PER_MINUTE: 10_000, CONNECT_AUTHORIZE_PER_MINUTE: 10_000 },
    }));
    // Discovered as a strict client discovers (RFC 8414): the metadata's issuer must be the URL the
    // server was reached at, here 127.0.0.1 and a free port (no PUBLIC_URL in development).
    const discovered = await oauth.discoveryRequest(new URL(base), { algorithm: 'oauth2', ...insecure });
    as = await oauth.processDiscoveryResponse(new URL(base), discovered);
  });
  afterAll(() => t.close());

  /** Runs the flow up to the callback: a fresh user, an app, PKCE, consent. */
  async function authorize(options: { scope?: string; clientType?: 'confidential' | 'public' } = {}) {
    const owner = await signedInUser(t.services);
    const person = await signedInUser(t.services);
    const { client: registered, clientSecret } = await registerApp(t.services, owner.user.id, {
      clientType: options.clientType ?? 'confidential',
    });
    const client: oauth.Client = { client_id: registered.clientId };
    const auth = clientSecret ? oauth.ClientSecretBasic(clientSecret) : oauth.None();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const params = {
      response_type: 'code',
      client_id: registered.clientId,
      redirect_uri: REDIRECT_URI,
      scope: options.scope ?? 'read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    const answer = await consent(base, person.cookie, params);
    expect(answer.status).toBe(302);
    const callback = oauth.validateAuthResponse(as, client, new URL(answer.location!), state);
    return { owner, person, registered, client, auth, verifier, state, params, callback, clientSecret };
  }

  const redeem = (flow: Awaited<ReturnType<typeof authorize>>, verifier = flow.verifier, redirectUri = REDIRECT_URI) =>
    oauth.authorizationCodeGrantRequest(as, flow.client, flow.auth, flow.callback, redirectUri, verifier, insecure);

  const me = (token: string) => fetch(`${base}/api/v1/user/me`, { headers: { authorization: `Bearer ${token}` } });

  async function oauthError(response: Response, process: (r: Response) => Promise<unknown>) {
    const error = await process(response).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    const body = (error as oauth.ResponseBodyError).cause as Record<string, unknown>;
    expect(body.statusCode).toBe(response.status);
    expect(body.message).toBe(body.error_description);
    return { status: response.status, body };
  }

  it('runs the whole flow: consent, code, tokens; the token calls REST and GraphQL as the user', async () => {
    const flow = await authorize({ scope: 'read transact' });
    const tokens = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('read transact');
    expect(tokens.refresh_token).toMatch(/^pgw_rt_/);

    const rest = await me(tokens.access_token);
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as any).data.email).toBe(flow.person.user.email);
    const graph = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { email } }' }),
    });
    expect(((await graph.json()) as any).data.me.email).toBe(flow.person.user.email);
  });

  it('works on GraphQL subscriptions, and a revoked grant closes the socket', async () => {
    const flow = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    let closedWith: number | undefined;
    const client = createClient({
      url: base.replace(/^http/, 'ws') + '/graphql',
      connectionParams: { authorization: `Bearer ${tokens.access_token}` },
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      on: { closed: (event) => (closedWith = (event as { code: number }).code) },
    });
    try {
      const first = await new Promise<any>((resolve, reject) =>
        client.subscribe({ query: '{ me { email } }' }, { next: resolve, error: reject, complete: () => undefined }),
      );
      expect(first.data.me.email).toBe(flow.person.user.email);
      client.subscribe(
        { query: 'subscription { events { id } }' },
        { next: () => undefined, error: () => undefined, complete: () => undefined },
      );
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, flow.client, flow.auth, tokens.refresh_token!, insecure),
      );
      await waitUntil(() => closedWith !== undefined, 5000);
      expect(closedWith).toBe(4401);
    } finally {
      await client.dispose();
    }
  });

  it('maps scopes onto permissions: an operation outside the token scope is 403', async () => {
    const flow = await authorize({ scope: 'read' });
    const { access_token } = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    expect((await me(access_token)).status).toBe(200);
    const transfer = await fetch(`${base}/api/v1/wallet/transfer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 1, recipient: flow.owner.user.email }),
    });
    expect(transfer.status).toBe(403);
    const keys = await fetch(`${base}/api/v1/api-keys`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(keys.status).toBe(403);
  });

  it('uses a code once: a second redemption is 400 and revokes every token issued from it', async () => {
    const flow = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    expect((await me(tokens.access_token)).status).toBe(200);
    const reused = await oauthError(await redeem(flow), (r) =>
      oauth.processAuthorizationCodeResponse(as, flow.client, r),
    );
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await me(tokens.access_token)).status).toBe(401);
    const refreshed = await oauth.refreshTokenGrantRequest(as, flow.client, flow.auth, tokens.refresh_token!, insecure);
    expect((await oauthError(refreshed, (r) => oauth.processRefreshTokenResponse(as, flow.client, r))).body.error).toBe(
      'invalid_grant',
    );
  });

  it('redeems one code at most once when two redemptions race', async () => {
    const flow = await authorize();
    const responses = await Promise.all([redeem(flow), redeem(flow)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('lets a code live 10 minutes', async () => {
    const flow = await authorize();
    clock.advance(10 * 60_000 + 1);
    const expired = await oauthError(await redeem(flow), (r) =>
      oauth.processAuthorizationCodeResponse(as, flow.client, r),
    );
    expect(expired.status).toBe(400);
    expect(expired.body.error_description).toMatch(/expired/);
  });

  it('wants redirect_uri equal, character for character, to the registered one and the authorize request', async () => {
    const flow = await authorize();
    const mismatch = await oauthError(await redeem(flow, flow.verifier, `${REDIRECT_URI}/`), (r) =>
      oauth.processAuthorizationCodeResponse(as, flow.client, r),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error_description).toMatch(/redirect_uri/);
    // At the authorize endpoint an unregistered URI gets a 400 page and never a redirect.
    const unregistered = await consent(base, flow.person.cookie, {
      ...flow.params,
      redirect_uri: 'http://127.0.0.1:9/Callback',
    });
    expect(unregistered.status).toBe(400);
    expect(unregistered.location).toBeNull();
  });

  it('requires PKCE S256: a wrong verifier fails, plain is refused, public clients must send a challenge', async () => {
    const flow = await authorize();
    const wrong = await oauthError(await redeem(flow, oauth.generateRandomCodeVerifier()), (r) =>
      oauth.processAuthorizationCodeResponse(as, flow.client, r),
    );
    expect(wrong.body.error_description).toMatch(/code_verifier/);

    const plain = await consent(base, flow.person.cookie, {
      ...flow.params,
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'plain',
    });
    expect(plain.status).toBe(302);
    const plainError = new URL(plain.location!).searchParams;
    expect(plainError.get('error')).toBe('invalid_request');
    expect(plainError.get('state')).toBe(flow.state);

    const { client } = await registerApp(t.services, flow.owner.user.id, { clientType: 'public' });
    const { code_challenge: _c, code_challenge_method: _m, ...withoutPkce } = flow.params;
    const refused = await consent(base, flow.person.cookie, { ...withoutPkce, client_id: client.clientId });
    expect(new URL(refused.location!).searchParams.get('error_description')).toMatch(/Public clients must use PKCE/);

    const publicFlow = await authorize({ clientType: 'public' });
    expect(publicFlow.clientSecret).toBeUndefined();
    const tokens = await oauth.processAuthorizationCodeResponse(as, publicFlow.client, await redeem(publicFlow));
    expect((await me(tokens.access_token)).status).toBe(200);
  });

  it('refuses scopes the app may not ask for, and redirects a denial as access_denied', async () => {
    const flow = await authorize();
    const { client } = await registerApp(t.services, flow.owner.user.id, { allowedScopes: ['read'] });
    const tooMuch = await consent(base, flow.person.cookie, {
      ...flow.params,
      client_id: client.clientId,
      scope: 'read transact',
    });
    expect(new URL(tooMuch.location!).searchParams.get('error')).toBe('invalid_scope');
    const unknown = await consent(base, flow.person.cookie, { ...flow.params, scope: 'admin' });
    expect(new URL(unknown.location!).searchParams.get('error')).toBe('invalid_scope');
    const denied = await consent(base, flow.person.cookie, flow.params, 'deny');
    const params = new URL(denied.location!).searchParams;
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('code')).toBeNull();
  });

  it('lets an access token live one hour', async () => {
    const flow = await authorize();
    const { access_token } = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    clock.advance(59 * 60_000);
    expect((await me(access_token)).status).toBe(200);
    clock.advance(60_001);
    expect((await me(access_token)).status).toBe(401);
  });

  it('rotates refresh tokens; replaying an old one revokes the whole grant', async () => {
    const flow = await authorize({ scope: 'read transact' });
    const first = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    const second = await oauth.processRefreshTokenResponse(
      as,
      flow.client,
      await oauth.refreshTokenGrantRequest(as, flow.client, flow.auth, first.refresh_token!, insecure),
    );
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.scope).toBe('read transact');
    expect((await me(second.access_token)).status).toBe(200);

    const replay = await oauthError(
      await oauth.refreshTokenGrantRequest(as, flow.client, flow.auth, first.refresh_token!, insecure),
      (r) => oauth.processRefreshTokenResponse(as, flow.client, r),
    );
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await me(second.access_token)).status).toBe(401);
    const afterReplay = await oauth.refreshTokenGrantRequest(
      as,
      flow.client,
      flow.auth,
      second.refresh_token!,
      insecure,
    );
    expect(afterReplay.status).toBe(400);
  });

  it('lets one of eight concurrent refreshes with one refresh token win; the others are replays and end the grant', async () => {
    const flow = await authorize();
    const first = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    // Straight to the service, so the eight transactions start together (over HTTP the first often commits before the rest read).
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.services.authorizationServer.refresh(flow.registered, { refreshToken: first.refresh_token! }).then(
          (tokens) => tokens,
          (error: { error?: string }) => error.error ?? 'error',
        ),
      ),
    );
    const won = outcomes.filter((o): o is TokenResponse => typeof o === 'object');
    expect(won).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'invalid_grant')).toHaveLength(7);
    // A second presentation of a spent refresh token revoked the whole grant, the winner's new tokens included.
    expect((await me(won[0]!.access_token)).status).toBe(401);
  });

  it('refuses a parameter sent twice (RFC 6749 §3.1) with invalid_request, never a server error', async () => {
    const flow = await authorize();
    const authorizeTwice = await fetch(`${base}/connect/authorize?${new URLSearchParams(flow.params)}&scope=manage`, {
      headers: { cookie: flow.person.cookie },
      redirect: 'manual',
    });
    expect(authorizeTwice.status).toBe(400);
    expect(((await authorizeTwice.json()) as { error: string }).error).toBe('invalid_request');
    const tokenTwice = await fetch(`${base}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=a&code=b&client_id=${flow.client.client_id}&client_secret=${flow.clientSecret}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
    });
    expect(tokenTwice.status).toBe(400);
    expect(await tokenTwice.json()).toMatchObject({
      error: 'invalid_request',
      error_description: 'code was sent more than once.',
    });
  });

  it("refuses a consent form posted from another person's session, and issues no code", async () => {
    const flow = await authorize();
    const intruder = await signedInUser(t.services);
    const answer = await consent(base, flow.person.cookie, flow.params, 'approve', undefined, intruder.cookie);
    expect(answer.status).toBe(403);
    expect(answer.location).toBeNull();
  });

  it('narrows scope on refresh but never widens it', async () => {
    const flow = await authorize({ scope: 'read' });
    const first = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    const wider = await oauth.refreshTokenGrantRequest(as, flow.client, flow.auth, first.refresh_token!, {
      ...insecure,
      additionalParameters: { scope: 'read transact' },
    });
    expect((await oauthError(wider, (r) => oauth.processRefreshTokenResponse(as, flow.client, r))).body.error).toBe(
      'invalid_scope',
    );
  });

  it('revokes per RFC 7009: a refresh token ends the grant; unknown tokens answer 200', async () => {
    const flow = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, flow.client, flow.auth, 'pgw_rt_unknown', insecure),
    );
    expect((await me(tokens.access_token)).status).toBe(200);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, flow.client, flow.auth, tokens.refresh_token!, insecure),
    );
    expect((await me(tokens.access_token)).status).toBe(401);

    const other = await authorize();
    const otherTokens = await oauth.processAuthorizationCodeResponse(as, other.client, await redeem(other));
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, other.client, other.auth, otherTokens.access_token, insecure),
    );
    expect((await me(otherTokens.access_token)).status).toBe(401);
  });

  it('answers 401 on the next call once the user revokes the app', async () => {
    const flow = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    const apps = await t.services.authorizationServer.connectedApps(flow.person.user.id);
    expect(apps.map((a) => a.name)).toEqual(['Budget Buddy']);
    await t.services.authorizationServer.disconnectApp(flow.person.user.id, apps[0]!.clientPk);
    expect((await me(tokens.access_token)).status).toBe(401);
    expect(await t.services.authorizationServer.connectedApps(flow.person.user.id)).toEqual([]);
  });

  it('answers 401 once the developer deletes the app', async () => {
    const flow = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    expect((await me(tokens.access_token)).status).toBe(200);
    await t.services.oauthClients.revoke(flow.owner.user.id, flow.registered.id);
    expect((await me(tokens.access_token)).status).toBe(401);
    // And another developer cannot delete it: it reads as missing.
    const other = await registerApp(t.services, flow.owner.user.id);
    await expect(t.services.oauthClients.revoke(flow.person.user.id, other.client.id)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('answers 401 when the consent session expired or the person signed out', async () => {
    const flow = await authorize();
    const late = await consent(base, flow.person.cookie, flow.params, 'approve', () => clock.advance(10 * 60_000 + 1));
    expect(late.status).toBe(401);
    expect(late.location).toBeNull();
    const signedOut = await consent(base, flow.person.cookie, flow.params, 'approve', async () => {
      const session = await t.services.accounts.sessionOf(flow.person.cookie.split('=')[1]);
      await t.services.accounts.signOut(session!.session.id);
    });
    expect(signedOut.status).toBe(401);
  });

  it('sends a person who is not signed in to sign in first, then back to the consent page', async () => {
    const flow = await authorize();
    const answer = await fetch(`${base}/connect/authorize?${new URLSearchParams(flow.params)}`, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    const next = new URL(answer.headers.get('location')!, base);
    expect(next.pathname).toBe('/signin');
    expect(next.searchParams.get('next')).toBe(`/connect/authorize?${new URLSearchParams(flow.params)}`);
  });

  it('authenticates clients: a wrong secret is 401 invalid_client, unknown grant types are refused', async () => {
    const flow = await authorize();
    const wrong = await oauth.authorizationCodeGrantRequest(
      as,
      flow.client,
      oauth.ClientSecretBasic('pgw_cs_wrong'),
      flow.callback,
      REDIRECT_URI,
      flow.verifier,
      insecure,
    );
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(((await wrong.json()) as any).error).toBe('invalid_client');
    const form = await fetch(`${base}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'password',
        client_id: flow.client.client_id,
        client_secret: flow.clientSecret,
      }),
    });
    expect(form.status).toBe(400);
    expect(await form.json()).toMatchObject({ error: 'unsupported_grant_type', statusCode: 400 });
    // The code still works afterwards with the right secret, sent in the body this time (client_secret_post).
    const ok = await oauth.authorizationCodeGrantRequest(
      as,
      flow.client,
      oauth.ClientSecretPost(flow.clientSecret!),
      flow.callback,
      REDIRECT_URI,
      flow.verifier,
      insecure,
    );
    expect(ok.status).toBe(200);
  });

  it('lets the business owner reach its customers with a token, and nobody else', async () => {
    const flow = await authorize({ scope: 'read manage' });
    const { access_token } = await oauth.processAuthorizationCodeResponse(as, flow.client, await redeem(flow));
    const business = await t.services.users.createBusiness(flow.person.user.id, 'Chidi Foods');
    const created = await fetch(`${base}/api/v1/customers/${business.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bola', email: 'bola@example.test', phone: '+2348031234567', externalRef: 'c-1' }),
    });
    expect(created.status).toBe(201);
    const stranger = await authorize({ scope: 'read manage' });
    const strangerToken = (await oauth.processAuthorizationCodeResponse(as, stranger.client, await redeem(stranger)))
      .access_token;
    const peek = await fetch(`${base}/api/v1/customers/${business.id}`, {
      headers: { authorization: `Bearer ${strangerToken}` },
    });
    expect(peek.status).toBe(404);
  });
});
