import { beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.js';
import { createTestServices } from '../helpers/app.js';
import { registerApp, signedInUser } from '../helpers/oauth-flow.js';

describe('developer app registration refuses bad input, naming the field', () => {
  let services: Services;
  let owner: string;
  beforeAll(async () => {
    services = await createTestServices();
    owner = (await signedInUser(services)).user.id;
  });

  it.each([
    [{ name: '  ' }, 'name', /name must be 1 to 100 characters/],
    [{ redirectUris: [] }, 'redirectUris', /1 to 10 URIs/],
    [{ redirectUris: ['callback'] }, 'redirectUris[0]', /absolute URI/],
    [{ redirectUris: ['http://partner.example/callback'] }, 'redirectUris[0]', /must use https/],
    [{ redirectUris: ['https://partner.example/a', 'https://partner.example/cb#frag'] }, 'redirectUris[1]', /fragment/],
    [{ redirectUris: ['javascript:alert(1)'] }, 'redirectUris[0]', /must use https/],
    [{ allowedScopes: [] }, 'allowedScopes', /at least one/],
    [{ allowedScopes: ['read', 'admin'] }, 'allowedScopes', /"admin" is not a scope/],
  ])('%j → 400 on %s', async (input, field, message) => {
    await expect(registerApp(services, owner, input)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      field,
      message: expect.stringMatching(message),
    });
  });

  it('accepts https and loopback http, and shows the secret once (only its hash is kept)', async () => {
    const { client, clientSecret } = await registerApp(services, owner, {
      redirectUris: ['https://partner.example/cb', 'http://127.0.0.1:8080/cb', 'http://localhost/cb'],
    });
    expect(clientSecret).toMatch(/^pgw_cs_/);
    expect(client.secretHash).not.toContain(clientSecret!);
    expect((await services.oauthClients.list(owner)).map((c) => c.clientId)).toContain(client.clientId);
    await expect(services.oauthClients.authenticate(client.clientId, 'pgw_cs_wrong')).rejects.toMatchObject({
      error: 'invalid_client',
    });
    expect((await services.oauthClients.authenticate(client.clientId, clientSecret)).id).toBe(client.id);
  });
});
