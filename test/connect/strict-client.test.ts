import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { challengeOf, consent, insecure, REDIRECT_URI, registerApp, signedInUser } from '../helpers/oauth-flow.js';

/**
 * One partner's walk with a strict OAuth client (oauth4webapi, the core of openid-client), every
 * step read only through the library: discovery at the address the server was reached at, PKCE and
 * consent, the code's exchange, the token on the API, then the three refusals a client must be able
 * to read: a 403 for a scope the token lacks and a 401 for a token that does not authenticate (RFC
 * 6750 challenges), and a 429 from the token endpoint (an RFC 6749 §5.2 error body, Retry-After).
 */
describe('a strict OAuth client through the whole Connect flow and its refusals', () => {
  const TOKEN_REQUESTS_PER_MINUTE = 3;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, baseUrl: base } = await startTestApp({
      listen: true,
      config: { CONNECT_TOKEN_PER_MINUTE: TOKEN_REQUESTS_PER_MINUTE, CONNECT_AUTHORIZE_PER_MINUTE: 10_000 },
    }));
  });
  afterAll(() => t.close());

  async function challenge(token: string, method: string, path: string, body?: object) {
    const refused = await challengeOf(base, token, method, path, body);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    return { status: refused!.status, parameters: refused!.cause[0]!.parameters };
  }

  it('discovers, authorizes, exchanges, calls the API, and reads a 403, a 401 and a 429 as the RFCs say', async () => {
    const discovered = await oauth.discoveryRequest(new URL(base), { algorithm: 'oauth2', ...insecure });
    const as = await oauth.processDiscoveryResponse(new URL(base), discovered);

    const owner = await signedInUser(t.services);
    const person = await signedInUser(t.services);
    const { client: registered, clientSecret } = await registerApp(t.services, owner.user.id);
    const client: oauth.Client = { client_id: registered.clientId };
    const auth = oauth.ClientSecretBasic(clientSecret!);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const answer = await consent(base, person.cookie, {
      response_type: 'code',
      client_id: registered.clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    expect(answer.status).toBe(302);
    const callback = oauth.validateAuthResponse(as, client, new URL(answer.location!), state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT_URI, verifier, insecure),
    );

    // The token works on the API, as the person it was granted by.
    const me = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL('/api/v1/user/me', base),
      new Headers(),
      null,
      insecure,
    );
    expect(me.status).toBe(200);
    expect((await me.json()).data.id).toBe(person.user.id);

    // 403: a `read` token asking to move money.
    const forbidden = await challenge(tokens.access_token, 'POST', '/api/v1/wallet/transfer', {
      amount: 100,
      recipient: owner.user.email,
    });
    expect(forbidden).toMatchObject({ status: 403, parameters: { error: 'insufficient_scope' } });

    // 401: a token that does not authenticate.
    const unauthorized = await challenge(`${tokens.access_token}x`, 'GET', '/api/v1/user/me');
    expect(unauthorized).toMatchObject({ status: 401, parameters: { error: 'invalid_token' } });

    // 429: the token endpoint's limit, one code exchange and refreshes later.
    let refreshToken = tokens.refresh_token!;
    for (let i = 1; i < TOKEN_REQUESTS_PER_MINUTE; i++) {
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, insecure),
      );
      refreshToken = refreshed.refresh_token!;
    }
    const limited = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, insecure);
    const error = await oauth.processRefreshTokenResponse(as, client, limited).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    const refused = error as oauth.ResponseBodyError;
    expect(refused.status).toBe(429);
    expect(refused.error).toBe('temporarily_unavailable');
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
