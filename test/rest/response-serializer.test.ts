import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializationSchema } from '../../src/rest/response-serializer.js';
import { DateTimeString, Envelope, Nullable } from '../../src/rest/schemas.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const Item = Type.Object({
  at: DateTimeString,
  deletedAt: Nullable(DateTimeString),
  note: Nullable(Type.String({ description: 'Free text.' })),
  count: Nullable(Type.Integer()),
  kind: Nullable(Type.Union([Type.Literal('A'), Type.Literal('B')])),
  nested: Nullable(Type.Object({ day: Nullable(Type.String({ format: 'date' })) })),
  tags: Type.Array(Nullable(Type.String())),
});
const Response = Envelope(Type.Object({ items: Type.Array(Item) }));

const compile = (schema: unknown) =>
  SerializerSelector()()({ schema, method: 'GET', url: '/x', httpStatus: '200' } as never) as (
    payload: unknown,
  ) => string;

describe('the response serializer’s schema', () => {
  it('turns each nullable scalar into a list of types, keeping its format, at any depth', () => {
    const schema = serializationSchema(Response) as {
      properties: { data: { properties: { items: { items: Record<string, Record<string, unknown>> } } } };
    };
    const item = schema.properties.data.properties.items.items;
    const props = item.properties as Record<string, Record<string, unknown>>;
    expect(props.deletedAt).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    expect(props.deletedAt).not.toHaveProperty('anyOf');
    expect(props.note).toMatchObject({ type: ['string', 'null'], description: 'Free text.' });
    expect(props.count).toMatchObject({ type: ['integer', 'null'] });
    expect((props.tags as { items: unknown }).items).toMatchObject({ type: ['string', 'null'] });
    // Unions that are more than a type (enums, objects) are still checked member by member.
    expect(props.kind).toHaveProperty('anyOf');
    expect(props.nested).toHaveProperty('anyOf');
    const nestedObject = (props.nested as { anyOf: Array<{ properties?: Record<string, unknown> }> }).anyOf.find(
      (member) => member.properties,
    );
    expect(nestedObject?.properties?.day).toMatchObject({ type: ['string', 'null'], format: 'date' });
    // The declared schema is left as it was.
    expect(Item.properties.deletedAt).toHaveProperty('anyOf');
  });

  it('writes the same JSON as the declared schema for values and nulls', () => {
    const declared = compile(Response);
    const lean = compile(serializationSchema(Response));
    const payloads = [
      {
        at: '2026-01-31T09:30:00.000Z',
        deletedAt: '2026-02-01T00:00:00.000Z',
        note: 'x "quoted" \u2028',
        count: 3,
        kind: 'A',
        nested: { day: '2026-01-31' },
        tags: ['a', null],
      },
      {
        at: '2026-01-31T09:30:00.000Z',
        deletedAt: null,
        note: null,
        count: null,
        kind: null,
        nested: null,
        tags: [],
        undeclared: 'dropped',
      },
    ];
    const body = { statusCode: 200, message: 'ok', data: { items: payloads }, errors: {} };
    expect(lean(body)).toBe(declared(body));
    expect(JSON.parse(lean(body)).data.items[1]).not.toHaveProperty('undeclared');
  });
});

describe('a route’s published schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('keeps its nullable date-times as anyOf with their format in OpenAPI', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const schema = document.paths['/api/v1/user/me'].get.responses['200'].content['application/json'].schema;
    expect(schema.properties.data).toEqual({ $ref: '#/components/schemas/User' });
    expect(document.components.schemas.User.properties.deletedDate).toEqual({
      anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }],
    });
  });
});
