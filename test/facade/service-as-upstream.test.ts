import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type StartedTestApp, startTestApp, type TestApp } from '../helpers/app.js';

const ME = `{ me { id nodeId createdAt updatedAt deletedDate email phone firstName lastName name haveTransactionPin
  verified resetToken resetTokenExpiry dob isAdmin deviceId deviceIp deviceModel platform lastLoggedIn } }`;

/** This gateway in service mode as the upstream, and a second one in facade mode in front of it. */
describe('a facade in front of this gateway in service mode', () => {
  let service: StartedTestApp;
  let facade: TestApp;

  beforeAll(async () => {
    service = await startTestApp({ listen: true });
    facade = await createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: service.baseUrl } });
  });

  afterAll(async () => {
    await facade.close();
    await service.t.close();
  });

  const graphql = (app: TestApp, key: string) =>
    app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: JSON.stringify({ query: ME }),
    });

  it('answers GraphQL me exactly as the upstream does', async () => {
    const key = service.tenant.keys.READ_ONLY;
    const upstream = await graphql(service.t, key);
    const through = await graphql(facade, key);
    expect(upstream.json().errors).toBeUndefined();
    expect(through.json()).toEqual(upstream.json());
    expect(through.json().data.me.id).toBe(service.tenant.user.id);
  });

  it('answers REST GET /api/v1/user/me with the upstream body and status', async () => {
    const key = service.tenant.keys.FULL_ACCESS;
    const direct = await service.t.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    const through = await facade.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    expect(through.statusCode).toBe(direct.statusCode);
    expect(through.body).toBe(direct.body);
    expect(through.headers['content-type']).toBe(direct.headers['content-type']);
  });

  it('refuses a key the upstream does not know as the upstream does: 401 on REST, UNAUTHENTICATED on GraphQL', async () => {
    const rest = await facade.app.inject({
      method: 'GET',
      url: '/api/v1/user/me',
      headers: { 'x-api-key': 'pk_unknown' },
    });
    expect(rest.statusCode).toBe(401);
    expect(rest.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    const graph = await graphql(facade, 'pk_unknown');
    expect(graph.json().errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});
