import { execute, getOperationAST, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext } from '../../src/graphql/context.js';
import { countQueryLimits } from '../../src/graphql/directives/operation-limits.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { createTestApp, createTestServices, graphql, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

describe("a query's rate limits, counted before it executes", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp({ config: { RATE_LIMIT_PER_MINUTE: 10 } });
    tenant = await seedTenant(t.services);
  });
  afterAll(() => t.close());

  it('counts the root fields that execute: aliases one each, @skip and @include by their variables, fragments', async () => {
    const key = tenant.keys.READ_ONLY;
    const withVariables = `query Counted($skip: Boolean!, $include: Boolean!) {
      a: me { id }
      b: me @skip(if: $skip) { id }
      c: me @include(if: $include) { id }
      ...More
      ... on Query { e: me { id } }
    }
    fragment More on Query { d: me { id } }`;
    // a, d, e: three (b skipped, c not included); then a, b, c, d, e: five.
    const three = await graphql(t.app, key, withVariables, { skip: true, include: false });
    expect(three.body.errors).toBeUndefined();
    expect(Object.keys(three.body.data!).sort()).toEqual(['a', 'd', 'e']);
    const five = await graphql(t.app, key, withVariables, { skip: false, include: true });
    expect(five.body.errors).toBeUndefined();
    // 8 of 10 counted. A field the key may not read counts nothing and answers FORBIDDEN; the same
    // field twice under one name executes (and counts) once; __typename is no root field.
    const mixed = await graphql(t.app, key, '{ keys: apiKeys { id } x: me { id } x: me { id } __typename }');
    expect(mixed.body.errors?.map((e) => [e.extensions.code, e.message.length > 0])).toEqual([['FORBIDDEN', true]]);
    expect(mixed.body.data).toBeNull();
    // 9 of 10: one more passes, the one after is the 11th and is refused.
    const last = await graphql(t.app, key, '{ one: me { id } two: me { id } }');
    const errors = last.body.errors as Array<{ extensions: { code: string }; path: string[] }> | undefined;
    expect(errors?.map((e) => [e.extensions.code, e.path])).toEqual([['RATE_LIMITED', ['two']]]);
  });

  it('a query over variables that do not coerce counts nothing and answers the variable error', async () => {
    const own = await seedTenant(t.services);
    for (let i = 0; i < 3; i++) {
      const wrong = await graphql(t.app, own.keys.READ_ONLY, 'query ($skip: Boolean!) { me @skip(if: $skip) { id } }', {
        skip: 'yes',
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    }
    const ten = await graphql(
      t.app,
      own.keys.READ_ONLY,
      `{ ${Array.from({ length: 10 }, (_, i) => `m${i}: me { id }`)} }`,
    );
    expect(ten.body.errors).toBeUndefined();
  });
});

describe('a query of cached records, its limits counted', () => {
  it('executes without waiting: no promise between the request and its answer', async () => {
    const services = await createTestServices();
    const tenant = await seedTenant(services);
    const schema = buildSchema();
    const context = await buildContext(services, [(credential) => services.apiKeys.authenticate(credential)], {
      credential: tenant.keys.READ_ONLY,
      requestId: 'r-1',
      clientIp: '127.0.0.1',
      userAgent: null,
    });
    await services.users.usersByIds([tenant.user.id]); // in the users' cache
    const document = parse('{ me { id email name createdAt } }');
    await countQueryLimits(schema, context, document, getOperationAST(document)!, {});
    const result = execute({ schema, document, contextValue: context });
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toEqual({
      data: {
        me: {
          id: tenant.user.id,
          email: tenant.user.email,
          name: 'Ada Obi',
          createdAt: tenant.user.createdAt.toISOString(),
        },
      },
    });
  });

  it("in a batched request, no operation reads another one's count as its own", async () => {
    const batching = await createTestApp({ config: { GRAPHQL_BATCHING: true, RATE_LIMIT_PER_MINUTE: 1000 } });
    try {
      const own = await seedTenant(batching.services);
      const batch = async (payload: object[]) =>
        (
          await batching.app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { 'content-type': 'application/json', 'x-api-key': own.keys.READ_ONLY },
            payload,
          })
        ).json() as Array<{ data?: unknown; errors?: Array<{ extensions: { code: string } }> }>;
      // A read-only key's mutation under the same response name as a counted query field.
      const [query, mutation] = await batch([
        { query: '{ a: me { id } }' },
        { query: 'mutation { a: createApiKey(input: { name: "x" }) { key } }' },
      ]);
      expect(query!.errors).toBeUndefined();
      expect(mutation!.errors?.map((e) => e.extensions.code)).toEqual(['FORBIDDEN']);
      // A refused field under the same response name as another query's allowed one.
      const [allowed, refused] = await batch([{ query: '{ a: me { id } }' }, { query: '{ a: apiKeys { id } }' }]);
      expect(refused!.errors?.map((e) => e.extensions.code)).toEqual(['FORBIDDEN']);
      expect(allowed!.errors).toBeUndefined();
    } finally {
      await batching.close();
    }
  });
});
