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
 */
function makeAjv(coerceTypes: boolean) {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, strict: false });
  addFormats(ajv);
  return ajv;
}

const coercing = makeAjv(true);
const strict = makeAjv(false);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path' };

/** Turns Ajv's errors into a 400 naming each bad field, the first one in the message. */
export function validationError(errors: ErrorObject[], context: string): DomainError {
  const problems: FieldProblem[] = [];
  for (const e of errors) {
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field = missing ? (path ? `${path}.${missing}` : missing) : path || PART_NAMES[context] || context;
    const message = missing ? `${field} is required` : `${field} ${describe(e)}`;
    if (!problems.some((p) => p.field === field)) problems.push({ field, message });
  }
  const first = problems[0] ?? { field: context, message: `${context} is invalid` };
  return new DomainError(
    'BAD_USER_INPUT',
    `Invalid ${PART_NAMES[context] ?? context}: ${problems.map((p) => p.message).join('; ')}.`,
    {
      field: first.field,
      details: problems,
    },
  );
}

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      return `must be ${params.type === 'integer' ? 'an integer' : `a ${String(params.type)}`}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return `must be a valid ${String(params.format)}`;
    default:
      return e.message ?? 'is invalid';
  }
}
