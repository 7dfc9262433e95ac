import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * RFC 8414 metadata: a strict client (openid-client) refuses metadata whose issuer is not the URL it
 * discovered from. Without PUBLIC_URL, outside production, the issuer is the origin the request
 * reached; with it (which production needs), always PUBLIC_URL.
 */
describe('Connect discovery', () => {
  let development: TestApp;
  let configured: TestApp;
  beforeAll(async () => {
    development = await createTestApp();
    configured = await createTestApp({ config: { PUBLIC_URL: 'https://gw.example.com/' } });
  });
  afterAll(async () => {
    await development.close();
    await configured.close();
  });

  const metadata = async (t: TestApp, host: string) =>
    (await t.app.inject({ url: '/.well-known/oauth-authorization-server', headers: { host } })).json();

  it('without PUBLIC_URL, names the address it was reached at: 127.0.0.1 and localhost alike', async () => {
    for (const origin of ['http://127.0.0.1:4321', 'http://localhost:4000', 'http://[::1]:8080']) {
      const body = await metadata(development, new URL(origin).host);
      expect(body).toMatchObject({
        issuer: origin,
        authorization_endpoint: `${origin}/connect/authorize`,
        token_endpoint: `${origin}/connect/token`,
        revocation_endpoint: `${origin}/connect/revoke`,
      });
    }
  });

  it('a Host that is not a plain host and port falls back to the configured URL', async () => {
    expect((await metadata(development, 'evil.example/<x>')).issuer).toBe('http://localhost:4000');
  });

  it('with PUBLIC_URL, always PUBLIC_URL', async () => {
    const body = await metadata(configured, '127.0.0.1:4321');
    expect(body.issuer).toBe('https://gw.example.com');
    expect(body.token_endpoint).toBe('https://gw.example.com/connect/token');
  });
});
