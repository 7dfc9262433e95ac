import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { registerApp, signedInUser } from '../helpers/oauth-flow.js';

describe('Connect rate limits (the seed: token 10/min, authorize 20/min)', () => {
  let t: TestApp;
  beforeAll(async () => ({ t } = await startTestApp()));
  afterAll(() => t.close());

  const token = (clientId: string, ip: string) =>
    t.app.inject({
      method: 'POST',
      url: '/connect/token',
      remoteAddress: ip,
      payload: `grant_type=authorization_code&code=nope&client_id=${clientId}&client_secret=wrong`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  it("refuses the 11th token request of a minute per client, with Retry-After and an OAuth error body holding the seed's", async () => {
    const owner = await signedInUser(t.services);
    const { client } = await registerApp(t.services, owner.user.id);
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push((await token(client.clientId, `10.0.1.${i}`)).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    const refused = await token(client.clientId, '10.0.1.99');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // An OAuth error body (RFC 6749 §5.2) carrying the seed's rate-limit fields.
    expect(refused.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(/10 per minute/),
      statusCode: 429,
      message: expect.stringMatching(/10 per minute/),
      retryAfter: Number(refused.headers['retry-after']),
    });
  });

  it('refuses the 11th token request of a minute per IP, whatever client it names', async () => {
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push((await token(`pgw_app_unknown${i}`, '10.0.2.1')).statusCode);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
  });

  it('refuses the 21st GET and the 21st POST to /connect/authorize in a minute', async () => {
    const get = (ip: string) =>
      t.app.inject({ url: '/connect/authorize?client_id=pgw_app_x&response_type=code', remoteAddress: ip });
    const gets = [];
    for (let i = 0; i < 21; i++) gets.push((await get('10.0.3.1')).statusCode);
    expect(gets).toEqual([...Array(20).fill(400), 429]);
    const post = (ip: string) =>
      t.app.inject({
        method: 'POST',
        url: '/connect/authorize',
        remoteAddress: ip,
        payload: 'client_id=pgw_app_y',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const posts = [];
    for (let i = 0; i < 21; i++) posts.push((await post('10.0.3.2')).statusCode);
    expect(posts).toEqual([...Array(20).fill(401), 429]);
  });
});
