import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/graphql/schema.js';
import { compileRoutes } from '../../src/rest/engine.js';
import { restV1Routes } from '../../src/rest/v1/index.js';
import { Type } from '@sinclair/typebox';

describe('the REST route table', () => {
  const schema = buildSchema();
  /** A route whose operation names a field the schema does not have. */
  const broken = {
    method: 'GET' as const,
    path: '/api/v1/broken',
    tag: 't',
    summary: 's',
    message: 'm',
    response: Type.Object({}),
    operation: '{ me { shoeSize } }',
  };

  it('every operation validates against the schema', () => {
    expect(() => compileRoutes(schema, restV1Routes)).not.toThrow();
  });

  it('validating eagerly (the default), a route whose operation does not validate throws, naming the route', () => {
    expect(() => compileRoutes(schema, [broken])).toThrow(
      /GET \/api\/v1\/broken: operation does not validate: .*shoeSize/,
    );
  });

  it('the server validates a route on its first call, and a broken one fails that call naming the route', () => {
    const [route] = compileRoutes(schema, [broken], { validate: 'firstCall' });
    expect(() => route!.run({} as never, {})).toThrow(/GET \/api\/v1\/broken: operation does not validate: .*shoeSize/);
  });

  it("the executor's refusals of several variables are one 400 naming every field", async () => {
    // A route whose JSON schema lets through what the graph's input type refuses.
    const [route] = compileRoutes(schema, [
      {
        ...broken,
        method: 'POST',
        operation:
          'mutation CreateBusinessCustomer($businessId: ID!, $input: BusinessCustomerInput!) { createBusinessCustomer(businessId: $businessId, input: $input) { id } }',
      },
    ]);
    const result = await route!.run({} as never, { businessId: 'b', input: { name: 5, phone: true } });
    const error = route!.errorOf(result.errors!);
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.details).toEqual([
      { field: 'name', message: 'name must be a string' },
      { field: 'phone', message: 'phone must be a string' },
    ]);
    expect(error.message).toBe('Invalid input: name must be a string; phone must be a string.');
  });

  it('every path is unique per method', () => {
    const keys = restV1Routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
