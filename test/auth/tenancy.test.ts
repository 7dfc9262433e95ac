import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { stampEvents } from '../helpers/events.js';
import { createTestApp, graphql, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

describe('tenant and environment isolation', () => {
  let t: TestApp;
  let alice: Tenant;
  let bob: Tenant;
  let sandboxEventId: string;
  let productionEventId: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await seedTenant(t.services);
    bob = await seedTenant(t.services);
    const now = new Date();
    sandboxEventId = (
      await recordEvent(
        t.services.db,
        { type: 'transaction.created', userId: alice.user.id, environment: 'sandbox', data: { n: 1 } },
        now,
      )
    ).id;
    productionEventId = (
      await recordEvent(
        t.services.db,
        { type: 'transaction.created', userId: alice.user.id, environment: 'production', data: { n: 2 } },
        now,
      )
    ).id;
    await stampEvents(t.services.db, [sandboxEventId, productionEventId]);
  });
  afterAll(() => t.close());

  const get = (url: string, key: string) => t.app.inject({ url, headers: { 'x-api-key': key } });

  it('an event is visible only to its owner in its environment; anything else reads as missing', async () => {
    expect((await get(`/api/v1/events/${sandboxEventId}`, alice.keys.READ_ONLY)).statusCode).toBe(200);
    expect((await get(`/api/v1/events/${productionEventId}`, alice.productionKey)).statusCode).toBe(200);

    const missing = await get('/api/v1/events/00000000-0000-4000-8000-000000000000', alice.keys.READ_ONLY);
    const otherEnvironment = await get(`/api/v1/events/${productionEventId}`, alice.keys.READ_ONLY);
    const otherUser = await get(`/api/v1/events/${sandboxEventId}`, bob.keys.READ_ONLY);
    expect(missing.statusCode).toBe(404);
    expect(otherEnvironment.statusCode).toBe(404);
    expect(otherUser.statusCode).toBe(404);
    expect(otherEnvironment.json()).toEqual(missing.json());
    expect(otherUser.json()).toEqual(missing.json());
  });

  it("event lists hold only the caller's environment", async () => {
    const sandbox = (await get('/api/v1/events', alice.keys.READ_ONLY))
      .json()
      .data.events.map((e: { id: string }) => e.id);
    const production = (await get('/api/v1/events', alice.productionKey))
      .json()
      .data.events.map((e: { id: string }) => e.id);
    const other = (await get('/api/v1/events', bob.keys.READ_ONLY)).json().data.events;
    expect(sandbox).toEqual([sandboxEventId]);
    expect(production).toEqual([productionEventId]);
    expect(other).toEqual([]);
  });

  it("API key lists are per environment, and another account's key cannot be revoked", async () => {
    const bobKeys = (await get('/api/v1/api-keys', bob.keys.FULL_ACCESS)).json().data as Array<{ id: string }>;
    const attempt = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${bobKeys[0]!.id}`,
      headers: { 'x-api-key': alice.keys.FULL_ACCESS },
    });
    expect(attempt.statusCode).toBe(404);
    const productionKeyId = (await get('/api/v1/api-keys', alice.productionKey)).json().data[0].id;
    const crossEnv = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${productionKeyId}`,
      headers: { 'x-api-key': alice.keys.FULL_ACCESS },
    });
    expect(crossEnv.statusCode).toBe(404);
    expect((await get('/api/v1/user/me', bob.keys.READ_ONLY)).statusCode).toBe(200);
  });

  it('federation _entities applies the same checks: own user resolves, another user is null, no key is refused', async () => {
    const query = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on User { id email } } }';
    const representations = [
      { __typename: 'User', id: alice.user.id },
      { __typename: 'User', id: bob.user.id },
      { __typename: 'User', id: '00000000-0000-4000-8000-000000000000' },
    ];
    const own = await graphql(t.app, alice.keys.READ_ONLY, query, { r: representations });
    expect(own.body.data!._entities).toEqual([{ id: alice.user.id, email: alice.user.email }, null, null]);

    const anonymous = await graphql(t.app, undefined, query, { r: representations });
    expect(anonymous.body.errors?.map((e) => e.extensions.code)).toContain('UNAUTHENTICATED');
    expect(JSON.stringify(anonymous.body.data ?? {})).not.toContain(alice.user.email);
  });

  it('publishes the subgraph SDL with User as an entity', async () => {
    const { body } = await graphql(t.app, undefined, '{ _service { sdl } }');
    expect(body.data!._service.sdl).toMatch(/type User\s+(implements Node\s+)?@key\(fields: "id"\)/);
    expect(body.data!._service.sdl).toContain('federation/v2.7');
  });
});
