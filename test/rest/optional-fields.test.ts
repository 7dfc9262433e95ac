import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { nullOptionalsDropper } from '../../src/rest/optional-fields.js';
import { restV1Routes } from '../../src/rest/v1/index.js';

/** Paths of the fields a response schema marks optional, e.g. `fromToken.logoUri`. */
function optionalFields(schema: unknown, path = ''): string[] {
  const node = schema as { type?: string; properties?: Record<string, unknown>; required?: string[]; items?: unknown };
  if (node?.type === 'array') return optionalFields(node.items, `${path}[]`);
  if (node?.type !== 'object' || !node.properties) return [];
  return Object.entries(node.properties).flatMap(([key, value]) => [
    ...(node.required?.includes(key) ? [] : [`${path}${key}`]),
    ...optionalFields(value, `${path}${key}.`),
  ]);
}

describe('optional response fields', () => {
  it('are only those the seed calls optional: the swap quote token logoUri and rawQuote', () => {
    const found = new Set(restV1Routes.flatMap((route) => optionalFields(route.response)));
    expect([...found].sort()).toEqual(['fromToken.logoUri', 'rawQuote', 'toToken.logoUri']);
  });

  it('are omitted when null, kept when given, and nullable fields keep their null', () => {
    const Token = Type.Object({ symbol: Type.String(), logoUri: Type.Optional(Type.String()) });
    const schema = Type.Object({
      tokens: Type.Array(Token),
      fromToken: Token,
      note: Type.Union([Type.String(), Type.Null()]),
      raw: Type.Optional(Type.Any()),
    });
    const drop = nullOptionalsDropper(schema)!;
    const payload = {
      tokens: [
        { symbol: 'A', logoUri: null },
        { symbol: 'B', logoUri: 'https://x.test/b.png' },
      ],
      fromToken: { symbol: 'C', logoUri: null },
      note: null,
      raw: null,
    };
    drop(payload);
    expect(payload).toEqual({
      tokens: [{ symbol: 'A' }, { symbol: 'B', logoUri: 'https://x.test/b.png' }],
      fromToken: { symbol: 'C' },
      note: null,
      raw: null,
    });
    expect(nullOptionalsDropper(Type.Object({ a: Type.String(), b: Type.Union([Type.String(), Type.Null()]) }))).toBe(
      undefined,
    );
  });
});
