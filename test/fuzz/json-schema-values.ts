import fc from 'fast-check';

type Schema = Record<string, any>;

/** Values that satisfy a JSON schema of the OpenAPI document (as far as a generator easily can). */
export function valuesOf(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(undefined);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0)
    return fc.oneof(...branches.map((b: Schema) => valuesOf(b, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: Math.min(schema.maximum ?? 100_000, 2 ** 31 - 1) });
    case 'number': {
      const min = Math.max(schema.minimum ?? schema.exclusiveMinimum ?? 0, 0);
      const max = Math.min(schema.maximum ?? 1_000_000, 1_000_000);
      // Two decimals, as money is written.
      return fc.integer({ min: Math.ceil(min * 100) + 1, max: Math.floor(max * 100) }).map((k) => k / 100);
    }
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valuesOf(schema.items, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const required: string[] = schema.required ?? [];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, child] of Object.entries(properties)) record[name] = valuesOf(child, depth + 1);
      return fc.record(record, { requiredKeys: required.filter((r) => r in record) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'date':
      return fc
        .date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'uuid':
      return fc.uuid();
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).map((s) => s.slice(0, schema.maxLength ?? 200));
    } catch {
      // fall through to plain text
    }
  }
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 24, 40) });
}
