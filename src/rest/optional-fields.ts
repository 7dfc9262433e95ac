type Schema = Record<string, unknown>;
type Drop = (value: unknown) => void;

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === 'object';

/** Whether a value of this schema may be null; a schema without a type (any value) may. */
function admitsNull(schema: Schema): boolean {
  if (Array.isArray(schema.anyOf)) return schema.anyOf.some((member) => isSchema(member) && admitsNull(member));
  if (schema.type === undefined) return true;
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
}

/**
 * Where the response schema has fields it marks optional but not nullable (the seed's token
 * `logoUri`, "string (optional)"), a function that deletes them from a payload when the operation
 * gave null: GraphQL has no absent field, only null, and a client reading the spec expects a
 * string or nothing. Undefined when the schema has none, so other routes do no work per answer.
 */
export function nullOptionalsDropper(schema: unknown): Drop | undefined {
  if (!isSchema(schema)) return undefined;
  if (schema.type === 'array') {
    const item = nullOptionalsDropper(schema.items);
    return item && ((value) => Array.isArray(value) && value.forEach(item));
  }
  if (schema.type !== 'object' || !isSchema(schema.properties)) return undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const dropped: string[] = [];
  const nested: Array<[string, Drop]> = [];
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!isSchema(property)) continue;
    if (!required.has(key) && !admitsNull(property)) dropped.push(key);
    const inner = nullOptionalsDropper(property);
    if (inner) nested.push([key, inner]);
  }
  if (dropped.length === 0 && nested.length === 0) return undefined;
  return (value) => {
    if (!isSchema(value)) return;
    for (const key of dropped) if (value[key] === null) delete value[key];
    for (const [key, inner] of nested) inner(value[key]);
  };
}
