import fc from 'fast-check';
import { type GraphQLInputType, isEnumType, isInputObjectType, isListType, isNonNullType, isScalarType } from 'graphql';

/** Values of a GraphQL input type (valid as far as the type says; rules beyond it are the server's). */
export function inputValuesOf(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return inputValuesOf(type.ofType, depth);
  if (depth > 5) return fc.constant(null);
  if (isListType(type)) return fc.array(inputValuesOf(type.ofType, depth + 1), { maxLength: 3 });
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, inputValuesOf(f.type, depth + 1)])), {
      requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name),
    });
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
        return fc.integer({ min: -10, max: 1000 });
      case 'SafeInt':
        return fc.integer({ min: 0, max: 1_000_000 });
      case 'Float':
        return fc.integer({ min: 1, max: 10_000_000 }).map((k) => k / 100);
      case 'Boolean':
        return fc.boolean();
      case 'DateTime':
        return fc
          .date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
          .map((d) => d.toISOString());
      case 'JSON':
        return fc.jsonValue({ maxDepth: 2 });
      case 'ID':
        return fc.oneof(fc.uuid(), fc.string({ maxLength: 12 }));
      default:
        return fc.string({ maxLength: 24 });
    }
  }
  return fc.constant(null);
}
