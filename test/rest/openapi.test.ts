import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdOf } from '../../src/rest/route.js';
import { restV1Routes } from '../../src/rest/v1/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('OpenAPI and the API root', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists every route of the table, with its method, and nothing else', async () => {
    const response = await t.app.inject({ url: '/api/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    const listed = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const expected = restV1Routes.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(listed.sort()).toEqual(expected.sort());
  });

  it('is the committed clients/openapi.json, which the clients are generated from (npm run clients)', async () => {
    const served = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const committed = JSON.parse(readFileSync(new URL('../../clients/openapi.json', import.meta.url), 'utf8'));
    expect(served).toEqual(committed);
  });

  it('names every operation, schema, tag and server as SDK generators need', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const operations = Object.values<Record<string, any>>(document.paths).flatMap((item) => Object.values(item));
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(restV1Routes.length);
    expect(ids.sort()).toEqual(restV1Routes.map(operationIdOf).sort());
    expect(document.paths['/api/v1/bills/records'].get.operationId).toBe('billRecords');
    expect(document.paths['/api/v1/solana-exchange/swap'].post.operationId).toBe('swapByQuote');
    for (const name of [
      'BillRecord',
      'DepositResult',
      'SwapQuote',
      'User',
      'OfframpQuote',
      'ErrorBody',
      'RateLimitError',
      'BillNotFoundError',
    ])
      expect(document.components.schemas[name], name).toMatchObject({ type: 'object' });
    expect(
      document.paths['/api/v1/bills/records/reference/{reference}'].get.responses['200'].content['application/json']
        .schema.properties.data,
    ).toEqual({ $ref: '#/components/schemas/BillRecord' });
    expect(document.servers).toEqual([{ url: 'http://localhost:4000', description: expect.any(String) }]);
    const tags = new Set(operations.flatMap((operation) => operation.tags));
    expect(document.tags.map((tag: { name: string }) => tag.name).sort()).toEqual([...tags].sort());
    for (const tag of document.tags) expect(tag.description, tag.name).toMatch(/\w/);
  });

  it('describes every answer, each error once in components.responses', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths))
      for (const [method, operation] of Object.entries<Record<string, any>>(item))
        for (const [status, response] of Object.entries<Record<string, any>>(operation.responses)) {
          const described = response.$ref
            ? document.components.responses[response.$ref.replace('#/components/responses/', '')]
            : response;
          expect(described?.description, `${method} ${path} ${status}`).toMatch(/\w/);
          expect(described.description).not.toBe('Default Response');
        }
    const transfer = document.paths['/api/v1/wallet/transfer'].post;
    expect(Object.keys(transfer.responses)).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(transfer.parameters).toContainEqual(
      expect.objectContaining({ in: 'header', name: 'Idempotency-Key', required: false }),
    );
    expect(document.paths['/api/v1/bills/records/reference/{reference}'].get.responses['404']).toEqual({
      $ref: '#/components/responses/BillNotFound',
    });
    expect(document.components.responses.TooManyRequests.headers['Retry-After']).toBeDefined();
  });

  it('documents security and the permission each route needs', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const me = document.paths['/api/v1/user/me'].get;
    expect(me.security).toEqual([{ ApiKey: [] }, { Bearer: [] }, { Connect: ['read'] }]);
    expect(document.paths['/api/v1/wallet/transfer'].post.security).toContainEqual({ Connect: ['transact'] });
    expect(document.components.securitySchemes.Connect.flows.authorizationCode.tokenUrl).toBe('/connect/token');
    expect(me.description).toMatch(/Read Only, Transactions, Account Management, Full Access/);
    expect(document.paths['/api/v1/api-keys'].post.description).toMatch(/permission: Account Management, Full Access/);
    expect(document.paths['/api/v1'].get.security).toEqual([]);
    expect(document.components.securitySchemes.ApiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-KEY',
    });
  });

  it('serves the docs page with its own assets', async () => {
    const page = await t.app.inject({ url: '/api/v1/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toMatch(/https?:\/\/(cdn|unpkg|jsdelivr)/);
    const script = await t.app.inject({ url: '/api/v1/docs/static/swagger-ui-bundle.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(Number(script.headers['content-length'])).toBe(script.rawPayload.length);
  });

  it("the docs page reads the served OpenAPI document, every route's included", async () => {
    const shown = await t.app.inject({ url: '/api/v1/docs/json' });
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toEqual((await t.app.inject({ url: '/api/v1/openapi.json' })).json());
    expect(Object.keys(shown.json().paths)).toContain('/api/v1/user/me');
    expect((await t.app.inject({ url: '/api/v1/docs/no-such-asset.js' })).statusCode).toBe(404);
  });

  it('GET /api/v1 names the service, version 1.0 and its links, without a key', async () => {
    const body = (await t.app.inject({ url: '/api/v1' })).json();
    expect(body).toMatchObject({
      statusCode: 200,
      errors: {},
      data: {
        service: 'Partner Gateway',
        version: '1.0',
        graphqlUrl: expect.stringMatching(/\/graphql$/),
        restDocsUrl: expect.stringMatching(/\/api\/v1\/docs$/),
      },
    });
  });

  it('health and readiness answer', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ url: '/readyz' })).json()).toEqual({
      status: 'ready',
      database: 'up',
      redis: 'not configured',
    });
    t.app.draining = true;
    const draining = await t.app.inject({ url: '/readyz' });
    expect(draining.statusCode).toBe(503);
    expect(draining.json()).toMatchObject({ status: 'draining' });
    t.app.draining = false;
  });
});
