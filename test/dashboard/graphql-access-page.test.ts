import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, graphql, type TestApp } from '../helpers/app.js';
import { FormClient } from '../helpers/form-client.js';
import { registerApp, signedInUser } from '../helpers/oauth-flow.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe("dashboard: a key's and an app's GraphQL access", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const signedIn = async () => {
    const { user, cookie } = await signedInUser(t.services);
    const client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);
    return { user, client };
  };

  it('registers a pasted manifest for a key, turns trusted documents on, and the key is held to them', async () => {
    const { user, client } = await signedIn();
    const { apiKey, key } = await t.services.apiKeys.create({
      userId: user.id,
      name: 'storefront',
      environment: 'sandbox',
      permission: 'READ_ONLY',
    });
    const keys = await client.get('/dashboard/keys?env=sandbox');
    expect(keys.body).toContain(`/dashboard/graphql-access/api_key/${apiKey.id}`);
    const path = `/dashboard/graphql-access/api_key/${apiKey.id}`;
    expect((await client.get(`${path}?env=sandbox`)).statusCode).toBe(200);

    const me = 'query Me { me { id } }';
    const registered = await client.post(`${path}/documents?env=sandbox`, {
      documents: JSON.stringify({ [`sha256:${sha256(me)}`]: me }),
    });
    expect(registered.statusCode).toBe(200);
    expect(registered.body).toContain('1 registered, 0 already registered.');
    const saved = await client.post(`${path}?env=sandbox`, {
      trustedDocumentsOnly: 'on',
      maxComplexity: '',
      maxDepth: '5',
    });
    expect(saved.body).toContain('Saved.');
    expect(saved.body).toContain('Me');

    expect((await graphql(t.app, key, me)).body.data?.me.id).toBe(user.id);
    const other = await graphql(t.app, key, '{ apiInfo { version } }');
    expect(other.status).toBe(403);

    // A bad limit is named; a manifest whose hash is not its text's is refused, naming the field.
    expect((await client.post(`${path}?env=sandbox`, { maxComplexity: 'lots' })).body).toContain(
      'maxComplexity must be',
    );
    const wrong = await client.post(`${path}/documents?env=sandbox`, {
      documents: JSON.stringify({ [`sha256:${sha256('x')}`]: '{ me { id } }' }),
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('documents[0].hash');

    const removed = await client.post(`${path}/documents/remove?env=sandbox`, { hash: sha256(me) });
    expect(removed.body).toContain('Removed.');
    expect((await graphql(t.app, key, me)).status).toBe(403);
  });

  it("saves an app's origins from the developer apps page, and another person's app is not found", async () => {
    const { user, client } = await signedIn();
    const { client: app } = await registerApp(t.services, user.id);
    const apps = await client.get('/dashboard/apps');
    expect(apps.body).toContain(`/dashboard/graphql-access/connect_app/${app.id}`);
    const path = `/dashboard/graphql-access/connect_app/${app.id}`;
    await client.get(path);
    const saved = await client.post(path, {
      allowedOrigins: 'https://budget.example\r\nhttp://localhost:5173',
      maxComplexity: '',
    });
    expect(saved.body).toContain('Saved.');
    expect((await t.services.oauthClients.find(app.clientId))?.allowedOrigins).toEqual([
      'https://budget.example',
      'http://localhost:5173',
    ]);
    const bad = await client.post(path, { allowedOrigins: 'https://budget.example/' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('allowedOrigins[0]');

    const stranger = await signedIn();
    expect((await stranger.client.get(path)).statusCode).toBe(404);
  });
});
