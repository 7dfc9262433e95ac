import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lookup } from '../../src/domain/webhooks/safe-http.js';
import { isBlockedAddress } from '../../src/domain/webhooks/url-policy.js';
import { secretBinding, WebhookService } from '../../src/domain/webhooks/webhook-service.js';
import { webhookStore } from '../../src/domain/webhooks/webhook-store.js';
import { graphql, sandboxPrincipal, seedTenant, startTestApp, type TestApp } from '../helpers/app.js';

/** Names this machine's /etc/hosts gives a loopback or private address (its own host name among them). */
function hostsFileNames(): string[] {
  const names = new Set<string>();
  for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || !isBlockedAddress(address)) continue;
    for (const name of aliases) if (!/localhost|^ip6-|\./.test(name)) names.add(name);
  }
  return [...names];
}

/** DNS that answers from a table, or never (a resolver that hangs). */
const tableDns =
  (table: Record<string, string[]>): Lookup =>
  (host, _options, callback) => {
    const addresses = table[host];
    if (addresses)
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  };

describe('webhook URLs on a production server: names are resolved when the endpoint is saved', () => {
  let t: TestApp;
  beforeAll(async () => {
    ({ t } = await startTestApp({
      isolated: true,
      config: { NODE_ENV: 'production', SECRETS_KEY: randomBytes(32).toString('base64') },
    }));
  });
  afterAll(() => t.close());

  const create = (key: string, url: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { 'x-api-key': key }, payload: { url } });

  it('refuses names that resolve to loopback or private addresses, over REST, naming the field url', async () => {
    expect(t.services.config.WEBHOOK_LOCAL_RECEIVERS).toBe(false);
    const { keys } = await seedTenant(t.services);
    const fromHostsFile = hostsFileNames();
    expect(fromHostsFile.length, 'a name in /etc/hosts with a loopback or private address').toBeGreaterThan(0);
    const refused = [
      ...fromHostsFile.map((name) => `https://${name}/hooks`),
      'https://localhost./hooks',
      'https://LOCALHOST/hooks',
      'https://127.1/hooks',
      'https://2130706433/hooks',
      'https://0x7f000001/hooks',
      'https://[::1]/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
    ];
    for (const url of refused) {
      const response = await create(keys.ACCOUNT_MANAGEMENT, url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json().details[0].field, url).toBe('url');
      expect(response.json().message, url).toMatch(/private, loopback|publicly reachable/);
    }
    for (const name of fromHostsFile)
      expect((await create(keys.ACCOUNT_MANAGEMENT, `https://${name}/hooks`)).json().message).toMatch(
        new RegExp(`host ${name} resolves to a private, loopback`),
      );
  });

  it('refuses a name that does not resolve with a 400 that says so, not a 500', async () => {
    const { keys } = await seedTenant(t.services);
    const response = await create(keys.ACCOUNT_MANAGEMENT, 'https://no-such-host.invalid/hooks');
    expect(response.statusCode).toBe(400);
    expect(response.json().details[0].field).toBe('url');
    expect(response.json().message).toMatch(/host no-such-host\.invalid could not be resolved/);
  });

  it('answers GraphQL with a user error on url', async () => {
    const { keys } = await seedTenant(t.services);
    const [name] = hostsFileNames();
    const result = await graphql(
      t.app,
      keys.ACCOUNT_MANAGEMENT,
      'mutation($url: String!) { createWebhookEndpoint(input: { url: $url }) { endpoint { id } } }',
      { url: `https://${name}/hooks` },
    );
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'url' });
  });

  it('refuses such a name when an endpoint’s URL is changed', async () => {
    const tenant = await seedTenant(t.services);
    const id = randomUUID();
    await webhookStore.insertEndpoint(t.services.db, {
      id,
      userId: tenant.user.id,
      environment: 'sandbox',
      url: 'https://hooks.partner.example/hooks',
      eventTypes: ['*'],
      secretSealed: t.services.secrets.seal('whsec_test', secretBinding({ id, userId: tenant.user.id })),
    });
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${id}`,
      headers: { 'x-api-key': tenant.keys.ACCOUNT_MANAGEMENT },
      payload: { url: `https://${hostsFileNames()[0]}/hooks` },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details[0].field).toBe('url');
  });

  it('saves a name whose every address is public; refuses one with any private address, or whose DNS hangs', async () => {
    const dns = tableDns({
      'hooks.partner.example': ['93.184.216.34', '2606:2800:220:1::1'],
      'split.partner.example': ['93.184.216.34', '10.0.0.7'],
    });
    const service = (timeoutMs?: number) =>
      new WebhookService(t.services.db, t.services.clock, t.services.secrets, false, { lookup: dns, timeoutMs });
    const principal = await sandboxPrincipal(t.services);
    const saved = await service().create(principal, { url: 'https://hooks.partner.example/hooks' });
    expect(saved.endpoint.url).toBe('https://hooks.partner.example/hooks');
    await expect(service().create(principal, { url: 'https://split.partner.example/hooks' })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/resolves to a private/),
    });
    await expect(service(50).create(principal, { url: 'https://hanging.partner.example/hooks' })).rejects.toMatchObject(
      { code: 'BAD_USER_INPUT', message: expect.stringMatching(/could not be resolved within/) },
    );
  });
});
