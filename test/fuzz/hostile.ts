import fc from 'fast-check';

/** Strings no boundary may pass on: NUL, unpaired surrogates, and the merely awkward. */
export const hostileString = fc.constantFrom(
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udc00',
  '\udfff\ud800',
  '',
  ' ',
  'x'.repeat(5000),
  '\u202e\u200b',
  '🙂'.repeat(50),
  "'; drop table users; --",
  '../../etc/passwd',
  '%00',
  '{{7*7}}',
  '1e309',
  'null',
  '-0',
);

/** Numbers at the edges: huge, tiny, negative, three decimals, beyond the safe integers. */
export const hostileNumber = fc.constantFrom(
  0,
  -1,
  -0.01,
  1.234,
  0.001,
  99.999,
  1e308,
  -1e308,
  5e-324,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 63),
  10_000_000.01,
  1e21,
);

/** `depth` arrays nested in one another, as JSON text (JSON.stringify would recurse). */
export const deepJson = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
export const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Any value of the wrong kind, hostile text and numbers included. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.constantFrom(null, true, false, [], {}, [null], { $ne: null }, ['a', 'b']),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Raw (already percent-encoded) path and query text that decodes badly or not at all. */
export const rawHostileSegment = fc.constantFrom(
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%C0%80',
  '%FF',
  '%ZZ',
  '%',
  '%E2%80%AE',
  '..%2F..%2F',
  'x'.repeat(3000),
  '%F0%9F%99%82',
  '%20',
  '-1',
  '0',
  '1e999',
  'null',
);

/** encodeURIComponent that survives lone surrogates (they become U+FFFD, as a browser sends). */
export function encode(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return encodeURIComponent(
    text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'),
  );
}
