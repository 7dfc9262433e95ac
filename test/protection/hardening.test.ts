import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createTestApp,
  graphql,
  type StartedTestApp,
  seedTenant,
  startTestApp,
  type Tenant,
  type TestApp,
} from '../helpers/app.js';

describe('GraphQL hardening', () => {
  let t: TestApp;
  let tenant: Tenant;
  let resolverCalls = 0;
  beforeAll(async () => {
    t = await createTestApp();
    tenant = await seedTenant(t.services);
    const original = t.services.users.usersByIds.bind(t.services.users);
    t.services.users.usersByIds = async (ids) => {
      resolverCalls++;
      return original(ids);
    };
  });
  afterAll(() => t.close());

  const refusedBeforeResolvers = async (query: string) => {
    const before = resolverCalls;
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, query);
    expect(resolverCalls).toBe(before);
    expect(body.data).toBeUndefined();
    expect(body.errors?.length).toBeGreaterThan(0);
    return { status, body };
  };

  it('refuses 500 aliases', async () => {
    const { body } = await refusedBeforeResolvers(
      `{ ${Array.from({ length: 500 }, (_, i) => `a${i}: me { id }`).join(' ')} }`,
    );
    expect(JSON.stringify(body.errors)).toMatch(/alias|token/i);
  });

  it('refuses a depth-40 query', async () => {
    const deep = `{ me ${'{ businesses '.repeat(39)}{ id }${' }'.repeat(39)} }`;
    const { body } = await refusedBeforeResolvers(deep);
    expect(JSON.stringify(body.errors)).toMatch(/depth/i);
  });

  it('refuses a cost bomb, even when alias and token limits are raised', async () => {
    const loose = await createTestApp({ config: { GRAPHQL_MAX_ALIASES: 10_000, GRAPHQL_MAX_TOKENS: 100_000 } });
    const fields = Array.from(
      { length: 300 },
      (_, i) => `f${i}: events(first: 200) { events { id type data created seq } endSeq hasMore }`,
    ).join(' ');
    const { body } = await graphql(loose.app, tenant.keys.READ_ONLY, `{ ${fields} }`);
    await loose.close();
    expect(body.data).toBeUndefined();
    expect(JSON.stringify(body.errors)).toMatch(/cost/i);
  });

  it('refuses too many directives', async () => {
    const { body } = await refusedBeforeResolvers(`{ me { id ${'@include(if: true) '.repeat(60)} } }`);
    expect(JSON.stringify(body.errors)).toMatch(/directive/i);
  });

  it('refuses batched requests and mutations over GET', async () => {
    const batch = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.READ_ONLY },
      payload: [{ query: '{ me { id } }' }, { query: '{ me { id } }' }],
    });
    expect(batch.statusCode).toBe(400);
    const batching = await createTestApp({ config: { GRAPHQL_BATCHING: true } });
    const allowed = await batching.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.READ_ONLY },
      payload: [{ query: '{ me { id } }' }, { query: '{ me { id } }' }],
    });
    await batching.close();
    expect(allowed.json()).toHaveLength(2);
    const mutation = await t.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('mutation { createApiKey(input: { name: "x" }) { key } }')}`,
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'apollo-require-preflight': 'true' },
    });
    expect(mutation.statusCode).toBe(405);
  });

  it('blocks a GET without a preflight-forcing header (CSRF prevention), and allows a real GET query', async () => {
    const csrf = await t.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('{ me { id } }')}`,
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(csrf.statusCode).toBe(400);
    expect(csrf.body).toMatch(/CSRF/);
    const ok = await t.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('{ me { id } }')}`,
      headers: { 'x-api-key': tenant.keys.READ_ONLY, 'apollo-require-preflight': '1' },
    });
    expect(ok.json().data.me.id).toBe(tenant.user.id);
  });

  it('introspection and suggestions are on outside production', async () => {
    const { body } = await graphql(t.app, undefined, '{ __schema { queryType { name } } }');
    expect(body.data?.__schema.queryType.name).toBe('Query');
    const typo = await graphql(t.app, tenant.keys.READ_ONLY, '{ mee { id } }');
    expect(typo.body.errors?.[0]?.message).toMatch(/Did you mean "me"/);
  });
});

describe('GraphQL hardening under production settings', () => {
  const ROUTER_SECRET = 'router-secret-0123456789';
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp({
      config: {
        NODE_ENV: 'production',
        GRAPHQL_INTROSPECTION: false,
        GRAPHQL_EXPLORER: false,
        ROUTER_SECRET,
        SECRETS_KEY: randomBytes(32).toString('base64'),
      },
    });
    tenant = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  it('refuses introspection and hides "did you mean" hints', async () => {
    const { body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ __schema { queryType { name } } }');
    expect(body.data).toBeUndefined();
    expect(JSON.stringify(body.errors)).toMatch(/introspection/i);
    const typo = await graphql(t.app, tenant.keys.READ_ONLY, '{ mee { id } }');
    expect(JSON.stringify(typo.body.errors)).not.toMatch(/Did you mean/);
    // The hint is cut from a validation error's message, not replaced by a placeholder.
    expect(typo.body.errors?.map((e: { message: string }) => e.message)).toEqual([
      'Cannot query field "mee" on type "Query".',
    ]);
  });

  it('hides hints in errors about variable values and enum literals too', async () => {
    const query = 'query ($s: DepositStatus) { me { deposits(status: $s) { totalCount } } }';
    const wrongEnum = await graphql(t.app, tenant.keys.READ_ONLY, query, { s: 'PENDIN' });
    expect(wrongEnum.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(wrongEnum.body.errors?.[0]?.message).toMatch(/does not exist in "DepositStatus" enum\.$/);
    expect(JSON.stringify(wrongEnum.body.errors)).not.toMatch(/Did you mean|PENDING/);
    const literal = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { deposits(status: PENDIN) { totalCount } } }');
    expect(JSON.stringify(literal.body.errors)).not.toMatch(/Did you mean|PENDING/);
  });

  it('_service and _entities answer only the router', async () => {
    const anonymous = await graphql(t.app, undefined, '{ _service { sdl } }');
    expect(anonymous.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const withKey = await graphql(t.app, tenant.keys.FULL_ACCESS, '{ _service { sdl } }');
    expect(withKey.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const wrongSecret = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-router-secret': 'not-the-secret-at-all' },
      payload: { query: '{ _service { sdl } }' },
    });
    expect(wrongSecret.json().errors[0].extensions.code).toBe('FORBIDDEN');
    const router = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-router-secret': ROUTER_SECRET },
      payload: { query: '{ _service { sdl } }' },
    });
    expect(router.json().data._service.sdl).toContain('@key');
    const entities = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        'content-type': 'application/json',
        'x-router-secret': ROUTER_SECRET,
        'x-api-key': tenant.keys.READ_ONLY,
      },
      payload: {
        query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on User { id } } }',
        variables: { r: [{ __typename: 'User', id: tenant.user.id }] },
      },
    });
    expect(entities.json().data._entities).toEqual([{ id: tenant.user.id }]);
  });

  it('never shows a stack trace', async () => {
    const { body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { nope } }');
    expect(JSON.stringify(body)).not.toMatch(/stacktrace|\.ts:\d+/);
  });

  it('does not serve the explorer', async () => {
    const page = await t.app.inject({ url: '/graphql', headers: { accept: 'text/html' } });
    expect(page.statusCode).not.toBe(302);
    expect((await t.app.inject({ url: '/graphql/explorer/' })).statusCode).toBe(404);
  });
});

describe('HTTP hygiene', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { CORS_ORIGINS: 'https://app.partner.example' } });
  });
  afterAll(() => t.close());

  it('answers CORS preflights for configured partner origins only', async () => {
    const allowed = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/user/me',
      headers: {
        origin: 'https://app.partner.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-api-key',
      },
    });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.partner.example');
    expect(String(allowed.headers['access-control-allow-headers'])).toMatch(/x-api-key/);
    const other = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/user/me',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('puts security headers on the docs and explorer pages', async () => {
    for (const url of ['/api/v1/docs/', '/graphql/explorer/']) {
      const page = await t.app.inject({ url });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['x-frame-options']).toBeDefined();
    }
  });

  it('sends browsers from /graphql to the explorer', async () => {
    const page = await t.app.inject({ url: '/graphql', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.statusCode).toBe(302);
    expect(page.headers.location).toBe('/graphql/explorer/');
    expect((await t.app.inject({ url: '/graphql/explorer/graphiql.js' })).statusCode).toBe(200);
  });
});

describe('GraphQL over the WebSocket under production settings', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({
      listen: true,
      config: {
        NODE_ENV: 'production',
        GRAPHQL_INTROSPECTION: false,
        GRAPHQL_EXPLORER: false,
        ROUTER_SECRET: 'router-secret-0123456789',
        SECRETS_KEY: randomBytes(32).toString('base64'),
      },
    });
  });
  afterAll(() => s.t.close());

  it('hides "did you mean" hints in validation and variable errors', async () => {
    const client = createClient({
      url: s.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': s.tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    const errorsOf = (query: string, variables?: Record<string, unknown>) =>
      new Promise<{ message: string }[]>((resolve, reject) =>
        client.subscribe(
          { query, variables },
          {
            next: (result) => (result.errors ? resolve(result.errors as never) : reject(new Error('answered'))),
            error: (errors) => resolve(errors as never),
            complete: () => undefined,
          },
        ),
      );
    try {
      const typo = await errorsOf('{ mee { id } }');
      expect(typo.map((e) => e.message)).toEqual(['Cannot query field "mee" on type "Query".']);
      const wrongEnum = await errorsOf('query ($s: DepositStatus) { me { deposits(status: $s) { totalCount } } }', {
        s: 'PENDIN',
      });
      expect(wrongEnum[0]?.message).toMatch(/does not exist in "DepositStatus" enum\.$/);
      expect(JSON.stringify(wrongEnum)).not.toMatch(/Did you mean|PENDING/);
    } finally {
      await client.dispose();
    }
  });
});
