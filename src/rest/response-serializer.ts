import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySerializerCompiler } from 'fastify';

/** The scalar types whose nullable form the serializer can check with `typeof` alone. */
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/** Keywords that make a schema more than its type: such a member keeps its `anyOf`. */
const NARROWING = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'enum', 'const'];

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === 'object';
const isNullSchema = (schema: unknown) =>
  isSchema(schema) && schema.type === 'null' && Object.keys(schema).length === 1;

/** The non-null member of `anyOf [scalar, null]`, or undefined when the union is anything else. */
function nullableScalar(schema: Schema): Schema | undefined {
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length !== 2) return undefined;
  const other = isNullSchema(members[0]) ? members[1] : isNullSchema(members[1]) ? members[0] : undefined;
  if (!isSchema(other) || typeof other.type !== 'string' || !SCALAR_TYPES.has(other.type)) return undefined;
  if (NARROWING.some((keyword) => keyword in other)) return undefined;
  return other;
}

/**
 * The response schema as the serializer reads it: each `anyOf [scalar, null]` (TypeBox's nullable
 * field) becomes `type: [scalar, 'null']`. fast-json-stringify checks every `anyOf` member with
 * ajv before writing the value, which for a nullable date-time ran ajv-formats' date, time and
 * date-time checks on every field of every response; a list of types is told apart by `typeof`.
 * The output is the same for every value the route answers with (its GraphQL data, whose
 * DateTime fields are already ISO strings). The schema the route declares (and OpenAPI
 * publishes) keeps its `anyOf` and formats.
 */
export function serializationSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializationSchema);
  if (!isSchema(schema)) return schema;
  const scalar = nullableScalar(schema);
  if (scalar) {
    const { anyOf: _members, ...rest } = schema;
    return { ...rest, ...scalar, type: [scalar.type, 'null'] };
  }
  const copy: Schema = {};
  for (const key of Object.keys(schema)) copy[key] = serializationSchema(schema[key]);
  return copy;
}

/**
 * Fastify's own response serializer (fast-json-stringify, which also drops fields the schema does
 * not declare), built per route and status on its first response instead of at start-up, where
 * compiling every route's responses took a large share of the start-up CPU.
 */
let serializerCompiler: ReturnType<ReturnType<typeof SerializerSelector>> | undefined;
export const lazySerializer: FastifySerializerCompiler<unknown> = (route) => {
  let serialize: ((payload: unknown) => string) | undefined;
  return (payload) => {
    serializerCompiler ??= SerializerSelector()();
    serialize ??= serializerCompiler({
      ...route,
      schema: serializationSchema(route.schema),
    } as Parameters<typeof serializerCompiler>[0]);
    return serialize(payload);
  };
};
