import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { challengeOf } from '../helpers/oauth-flow.js';

/**
 * RFC 6750 §3: API refusals of a credential carry `WWW-Authenticate: Bearer` with the RFC's error
 * codes, read here by oauth4webapi (the core of openid-client) as a strict client reads them.
 */
describe('WWW-Authenticate on API 401 and 403', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  beforeAll(async () => ({ t, tenant, baseUrl: base } = await startTestApp({ listen: true })));
  afterAll(() => t.close());

  /** The challenges of a protected-resource request, as the client parses them. */
  const challengesOf = async (token: string, method: string, path: string, body?: object) => {
    const challenge = await challengeOf(base, token, method, path, body);
    expect(challenge).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    return { status: challenge!.status, challenges: challenge!.cause, body: await challenge!.response.json() };
  };

  it('no credential: a 401 challenge without an error code (§3.1)', async () => {
    const response = await t.app.inject({ url: '/api/v1/user/me' });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="partner-gateway"');
  });

  it('a token that does not authenticate: 401 invalid_token, the seed body unchanged', async () => {
    const { status, challenges, body } = await challengesOf('pgw_at_not-a-token', 'GET', '/api/v1/user/me');
    expect(status).toBe(401);
    expect(challenges).toEqual([
      {
        scheme: 'bearer',
        parameters: {
          realm: 'partner-gateway',
          error: 'invalid_token',
          error_description: 'The API key or access token is invalid, expired or revoked.',
        },
      },
    ]);
    expect(body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    // An API key in X-API-KEY that does not authenticate is answered the same way.
    const byKey = await t.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': 'pgw_sbx_nope' } });
    expect(byKey.headers['www-authenticate']).toMatch(/^Bearer realm="partner-gateway", error="invalid_token"/);
  });

  it('a credential without the permission: 403 insufficient_scope naming the scope that allows it', async () => {
    const { status, challenges } = await challengesOf(tenant.keys.READ_ONLY, 'POST', '/api/v1/api-keys', {
      name: 'k',
    });
    expect(status).toBe(403);
    expect(challenges).toEqual([
      {
        scheme: 'bearer',
        parameters: {
          realm: 'partner-gateway',
          error: 'insufficient_scope',
          error_description: expect.stringMatching(/Account Management or Full Access/),
          scope: 'manage',
        },
      },
    ]);
  });

  it('answers that are not a credential refusal carry no challenge', async () => {
    const ok = await t.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': tenant.keys.READ_ONLY } });
    expect(ok.statusCode).toBe(200);
    const badInput = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
      payload: { name: 5 },
    });
    expect(badInput.statusCode).toBe(400);
    for (const response of [ok, badInput]) expect(response.headers['www-authenticate']).toBeUndefined();
  });
});
