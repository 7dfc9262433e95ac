import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormClient } from '../helpers/form-client.js';
import { signedInUser } from '../helpers/oauth-flow.js';

describe("dashboard: an API key's recent requests", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const clientFor = (cookie: string) => {
    const client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);
    return client;
  };

  it("shows the requests made with that key, with their request ids, and not another key's; no query values", async () => {
    const { user, cookie } = await signedInUser(t.services);
    const create = (name: string) =>
      t.services.apiKeys.create({ userId: user.id, name, environment: 'sandbox', permission: 'READ_ONLY' });
    const [one, other] = await Promise.all([create('checkout server'), create('reporting job')]);
    const mine = `mine-${randomUUID()}`;
    const theirs = `theirs-${randomUUID()}`;

    const call = (key: string, url: string, requestId: string) =>
      t.app.inject({ url, headers: { 'x-api-key': key, 'x-request-id': requestId } });
    expect((await call(one.key, '/api/v1/user/me', mine)).statusCode).toBe(200);
    const withQuery = await t.app.inject({
      method: 'POST',
      url: '/graphql?secret=hunter2',
      headers: { 'x-api-key': one.key, 'x-request-id': `${mine}-q`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ me { email } }' }),
    });
    expect(withQuery.statusCode).toBe(200);
    expect(withQuery.headers['x-request-id']).toBe(`${mine}-q`);
    expect((await call(other.key, '/api/v1/user/me', theirs)).statusCode).toBe(200);
    // A wrong key authenticates nothing: it is in no key's log.
    expect((await call('pgw_sbx_not-a-real-key', '/api/v1/user/me', `${mine}-forged`)).statusCode).toBe(401);

    const client = clientFor(cookie);
    const page = await client.get(`/dashboard/keys/${one.apiKey.id}/requests?env=sandbox`);
    expect(page.statusCode).toBe(200);
    const rows = [...page.body.matchAll(/<tr class="request">([\s\S]*?)<\/tr>/g)].map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    // Newest first: the GraphQL request (its query string reduced to ?…), then the REST one.
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(new RegExp(`^\\S+ \\S+ UTC POST /graphql\\?… 200 [\\d.]+ ms ${mine}-q$`));
    expect(rows[1]).toMatch(new RegExp(`^\\S+ \\S+ UTC GET /api/v1/user/me 200 [\\d.]+ ms ${mine}$`));
    expect(page.body).not.toContain(theirs);
    expect(page.body).not.toContain('forged');
    expect(page.body).not.toContain('hunter2');
    // Nor the request's body, nor the answer's (the account's email is in both the page header
    // and the answer: only the header's copy is there).
    expect(page.body).not.toContain('me { email }');
    expect(page.body.split(user.email)).toHaveLength(2);
    expect(page.body).not.toContain(one.key);
    expect(client.textOf('instance')).toBe(t.services.requestLog.instance);
    expect(page.body).toContain('Requests other instances served are not merged in');

    const theirPage = await client.get(`/dashboard/keys/${other.apiKey.id}/requests?env=sandbox`);
    expect(theirPage.body).toContain(theirs);
    expect(theirPage.body).not.toContain(mine);

    // The keys page links each key's log.
    expect((await client.get('/dashboard/keys')).body).toContain(`href="/dashboard/keys/${one.apiKey.id}/requests`);
  });

  it("answers another user's key, or no key at all, like a missing one", async () => {
    const owner = await signedInUser(t.services);
    const { apiKey } = await t.services.apiKeys.create({
      userId: owner.user.id,
      name: 'private',
      environment: 'sandbox',
    });
    const stranger = clientFor((await signedInUser(t.services)).cookie);
    expect((await stranger.get(`/dashboard/keys/${apiKey.id}/requests`)).statusCode).toBe(404);
    expect((await stranger.get('/dashboard/keys/not-a-key/requests')).statusCode).toBe(404);
    // Signed out: to the sign-in page.
    const signedOut = await t.app.inject({ url: `/dashboard/keys/${apiKey.id}/requests` });
    expect(signedOut.statusCode).toBe(303);
  });
});
