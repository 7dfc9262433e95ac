import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, graphql, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

describe('rate limits (in memory)', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp({ config: { RATE_LIMIT_PER_MINUTE: 10, RATE_LIMIT_ANONYMOUS_PER_MINUTE: 5 } });
    tenant = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  it('50 concurrent REST requests against a limit of 10 let exactly 10 through; the rest get the seed 429 body and Retry-After', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        t.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': tenant.keys.READ_ONLY } }),
      ),
    );
    const ok = responses.filter((r) => r.statusCode === 200);
    const limited = responses.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(40);
    const body = limited[0]!.json();
    expect(Object.keys(body).sort()).toEqual(['message', 'retryAfter', 'statusCode']);
    expect(body.statusCode).toBe(429);
    expect(body.retryAfter).toBeGreaterThanOrEqual(1);
    expect(body.retryAfter).toBeLessThanOrEqual(60);
    expect(limited[0]!.headers['retry-after']).toBe(String(body.retryAfter));
  });

  it('GraphQL counts root fields and aliases, not HTTP requests, and answers RATE_LIMITED with the wait', async () => {
    const key = tenant.keys.FULL_ACCESS;
    const four = await graphql(t.app, key, '{ a: me { id } b: me { id } c: me { id } d: me { id } }');
    expect(four.body.errors).toBeUndefined();
    const seven = await graphql(t.app, key, `{ ${Array.from({ length: 7 }, (_, i) => `m${i}: me { id }`).join(' ')} }`);
    const codes = (seven.body.errors ?? []).map((e) => e.extensions.code);
    expect(codes).toEqual(['RATE_LIMITED']); // 4 + 6 = 10 allowed, the 7th alias is the 11th operation
    expect(seven.body.errors![0]!.extensions.retryAfter).toBeGreaterThanOrEqual(1);
    expect(seven.body.data).toBeNull(); // me is non-null, so one refusal nulls the whole result
  });

  it('a field with @rateLimit has its own budget on top of the default', async () => {
    const app = await createTestApp({ config: { RATE_LIMIT_PER_MINUTE: 1000 } });
    const own = await seedTenant(app.services);
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      statuses.push(
        (
          await app.app.inject({
            method: 'POST',
            url: '/api/v1/api-keys',
            headers: { 'x-api-key': own.keys.FULL_ACCESS },
            payload: { name: `k${i}` },
          })
        ).statusCode,
      );
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual([429, 429]);
    expect(
      (await app.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': own.keys.FULL_ACCESS } })).statusCode,
    ).toBe(200);
    await app.close();
  });

  it('public routes are limited per IP', async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await t.app.inject({ url: '/api/v1', remoteAddress: '203.0.113.7' })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await t.app.inject({ url: '/api/v1', remoteAddress: '203.0.113.8' })).statusCode).toBe(200);
  });

  it('failed authentications are limited per IP, so keys cannot be guessed at speed', async () => {
    const guess = () =>
      t.app.inject({
        url: '/api/v1/user/me',
        remoteAddress: '198.51.100.9',
        headers: { 'x-api-key': `pgw_sbx_${'C'.repeat(43)}` },
      });
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await guess()).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it('a rejected credential is one failed authentication per request, however many guarded fields it reaches', async () => {
    const guess = () =>
      t.app.inject({
        method: 'POST',
        url: '/graphql',
        remoteAddress: '198.51.100.10',
        headers: { 'x-api-key': `pgw_sbx_${'D'.repeat(43)}`, 'content-type': 'application/json' },
        payload: { query: '{ a: me { id } b: me { id } c: me { id } }' },
      });
    const codes: string[][] = [];
    for (let i = 0; i < 6; i++) {
      const body = (await guess()).json() as { errors?: Array<{ extensions: { code: string } }> };
      codes.push([...new Set((body.errors ?? []).map((e) => e.extensions.code))]);
    }
    // The limit is 5 failures a minute: five requests of three guarded fields each are refused as
    // unauthenticated, the sixth as rate limited.
    expect(codes).toEqual([...Array.from({ length: 5 }, () => ['UNAUTHENTICATED']), ['RATE_LIMITED']]);
  });
});
