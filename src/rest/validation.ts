import AjvModule, { type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv and ajv-formats are CommonJS; their default export is one level down under NodeNext.
const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
import type { FastifySchemaCompiler } from 'fastify';
import { DomainError, type FieldProblem } from '../domain/errors.js';

/**
 * Two validators: path and query strings are coerced to their declared types (they arrive as
 * text), JSON bodies are not, so `"amount": "100"` is refused instead of silently read as 100.
 * `verbose` gives each error its schema, so a message can state a range or the allowed values.
 */
function makeAjv(coerceTypes: boolean) {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

const coercing = makeAjv(true);
const strict = makeAjv(false);

/**
 * Compiles a route's schema on the route's first request, not at start-up: compiling all of them
 * was a tenth of the start-up CPU, for routes many processes never serve. Validation, its
 * coercion and its errors are the same either way.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  type Validate = ReturnType<FastifySchemaCompiler<unknown>> & { errors?: unknown };
  let compiled: Validate | undefined;
  const validate = ((data: unknown) => {
    compiled ??= ajv.compile(schema as object) as Validate;
    const valid = compiled(data);
    // Fastify reads the outcome's errors from the function it was given.
    validate.errors = compiled.errors;
    return valid;
  }) as Validate;
  return validate;
};

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path' };
const UNKNOWN: Record<string, string> = {
  body: 'is not a known field',
  querystring: 'is not a known query parameter',
  params: 'is not a known path parameter',
};

/**
 * Turns Ajv's errors into a 400 naming each bad field, the first one in the message. Errors of
 * one field are read together: the branches of a union of literals become "must be one of …",
 * of a nullable type "must be a string or null". No message repeats the submitted value.
 */
export function validationError(errors: ErrorObject[], context: string): DomainError {
  const byField = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const params = e.params as { missingProperty?: string; additionalProperty?: string };
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const child = params.missingProperty ?? params.additionalProperty;
    const field = child ? (path ? `${path}.${child}` : child) : path || PART_NAMES[context] || context;
    byField.set(field, [...(byField.get(field) ?? []), e]);
  }
  const problems: FieldProblem[] = [...byField].map(([field, fieldErrors]) => ({
    field,
    message: `${field} ${describeAll(fieldErrors, context)}`,
  }));
  const first = problems[0] ?? { field: context, message: `${context} is invalid` };
  return new DomainError(
    'BAD_USER_INPUT',
    `Invalid ${PART_NAMES[context] ?? context}: ${problems.map((p) => p.message).join('; ')}.`,
    { field: first.field, details: problems },
  );
}

/**
 * The schema's refusal with the operation's own problems of the fields it did not name (a field
 * is named when it, a part of it or the whole it belongs to is): one answer, every bad field.
 */
export function withRuleProblems(refusal: DomainError, ruleProblems: FieldProblem[]): DomainError {
  const named = refusal.details ?? [];
  const covers = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
  const more = ruleProblems.filter((p) => !named.some((n) => covers(n.field, p.field)));
  if (more.length === 0) return refusal;
  const problems = [...named, ...more];
  return new DomainError(
    'BAD_USER_INPUT',
    `${refusal.message.replace(/\.$/, '')}; ${more.map((p) => p.message.replace(/\.$/, '')).join('; ')}.`,
    {
      field: problems[0]!.field,
      details: problems,
    },
  );
}

function describeAll(errors: ErrorObject[], context: string): string {
  const allowed = errors.flatMap((e) =>
    e.keyword === 'const' ? [(e.params as { allowedValue: unknown }).allowedValue] : [],
  );
  const enumValues = errors.flatMap((e) =>
    e.keyword === 'enum' ? ((e.params as { allowedValues: unknown[] }).allowedValues ?? []) : [],
  );
  const values = [...new Set([...allowed, ...enumValues])];
  if (values.length > 0 && errors.every((e) => ['const', 'enum', 'anyOf', 'type'].includes(e.keyword))) {
    const types = errors.filter((e) => e.keyword === 'type').map((e) => (e.params as { type: string }).type);
    return `must be one of ${values.map(String).join(', ')}${types.includes('null') ? ', or null' : ''}`;
  }
  const types = [...new Set(errors.filter((e) => e.keyword === 'type').map((e) => typeName(e)))];
  if (types.length > 1 && errors.every((e) => e.keyword === 'type' || e.keyword === 'anyOf'))
    return `must be ${types.join(' or ')}`;
  const specific = errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf') ?? errors[0]!;
  return describe(specific, context);
}

function typeName(e: ErrorObject): string {
  const type = String((e.params as { type: unknown }).type);
  if (type === 'integer') return 'an integer';
  if (type === 'null') return 'null';
  if (type === 'object' || type === 'array') return `an ${type}`;
  return `a ${type}`;
}

function describe(e: ErrorObject, context: string): string {
  const params = e.params as Record<string, unknown>;
  const schema = (e.parentSchema ?? {}) as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return UNKNOWN[context] ?? 'is not a known field';
    case 'type':
      return `must be ${typeName(e)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    case 'format':
      return `must be a valid ${String(params.format)}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return rangeOf(schema);
    case 'minLength':
    case 'maxLength':
      return lengthOf(schema, 'characters');
    case 'minItems':
    case 'maxItems':
      return lengthOf({ minLength: schema.minItems, maxLength: schema.maxItems }, 'items');
    case 'pattern':
      return 'is not in the expected format';
    default:
      return e.message ?? 'is invalid';
  }
}

/** "must be between 1 and 200", "must be at least 1", "must be greater than 0"… from the schema. */
function rangeOf(schema: Record<string, unknown>): string {
  const low =
    schema.minimum !== undefined
      ? { value: schema.minimum, words: 'at least' }
      : schema.exclusiveMinimum !== undefined
        ? { value: schema.exclusiveMinimum, words: 'greater than' }
        : undefined;
  const high =
    schema.maximum !== undefined
      ? { value: schema.maximum, words: 'at most' }
      : schema.exclusiveMaximum !== undefined
        ? { value: schema.exclusiveMaximum, words: 'less than' }
        : undefined;
  if (low && high && low.words === 'at least' && high.words === 'at most')
    return `must be between ${String(low.value)} and ${String(high.value)}`;
  return `must be ${[low, high]
    .filter(Boolean)
    .map((b) => `${b!.words} ${String(b!.value)}`)
    .join(' and ')}`;
}

function lengthOf(schema: Record<string, unknown>, unit: string): string {
  const min = schema.minLength as number | undefined;
  const max = schema.maxLength as number | undefined;
  if (min !== undefined && max !== undefined) return `must be ${min} to ${max} ${unit} long`;
  if (min === 1) return 'must not be empty';
  if (min !== undefined) return `must be at least ${min} ${unit} long`;
  return `must be at most ${String(max)} ${unit} long`;
}
