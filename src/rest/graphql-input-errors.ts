import { type GraphQLError, type GraphQLSchema, isEnumType } from 'graphql';
import { DomainError } from '../domain/errors.js';

/**
 * A REST route's variables are built from validated input, so the executor refusing them is rare;
 * when it does (a value the route's JSON schema allowed but the graph's type does not), the caller
 * still gets a REST answer: the field named as the REST input names it, a reason in plain words,
 * and nothing of GraphQL (`Variable "$…"`, type names) nor the submitted value.
 */
export function restInputError(error: GraphQLError, schema: GraphQLSchema): DomainError {
  const text = error.message;
  const variable = /^Variable "\$(\w+)"/.exec(text)?.[1];
  const at = /got invalid value .*? at "([^"]+)";/s.exec(text)?.[1];
  let path = at ? at.split('.') : variable ? [variable] : [];
  // `input` and `filter` are wrappers the route builds around the body or the query string.
  if (path.length > 1 && (path[0] === 'input' || path[0] === 'filter')) path = path.slice(1);
  const named = /Field "(\w+)" (?:is not defined by type|of required type)/.exec(text)?.[1];
  if (named) path = path[0] === 'input' || path[0] === 'filter' ? [named] : [...path, named];
  const field = path.join('.') || 'body';
  const reason = reasonOf(text, schema);
  const message = `${field} ${reason}`;
  return new DomainError('BAD_USER_INPUT', `Invalid input: ${message}.`, {
    field,
    details: [{ field, message }],
    cause: error,
  });
}

/** Several refusals of the variables as one 400 naming every field (the executor reports each). */
export function restInputErrors(errors: readonly GraphQLError[], schema: GraphQLSchema): DomainError {
  const refusals = errors.map((error) => restInputError(error, schema));
  if (refusals.length === 1) return refusals[0]!;
  const details = refusals.flatMap((refusal) => refusal.details ?? []);
  return new DomainError('BAD_USER_INPUT', `Invalid input: ${details.map((d) => d.message).join('; ')}.`, {
    field: details[0]!.field,
    details,
    cause: errors[0],
  });
}

function reasonOf(text: string, schema: GraphQLSchema): string {
  if (/is not defined by type/.test(text)) return 'is not a known field';
  if (/was not provided|must not be null/.test(text)) return 'is required';
  const enumName = /does not exist in "(\w+)" enum/.exec(text)?.[1] ?? /Expected type "(\w+)"/.exec(text)?.[1];
  const enumType = enumName ? schema.getType(enumName) : undefined;
  if (enumType && isEnumType(enumType))
    return `must be one of ${enumType
      .getValues()
      .map((v) => v.name)
      .join(', ')}`;
  if (/non 32-bit|larger than|too large|out of range|safe integer/i.test(text)) return 'is out of range';
  if (/non-integer|Int cannot represent/.test(text)) return 'must be an integer';
  if (/Float cannot represent|non numeric/.test(text)) return 'must be a number';
  if (/String cannot represent|ID cannot represent/.test(text)) return 'must be a string';
  if (/Boolean cannot represent/.test(text)) return 'must be true or false';
  if (/to be an object/.test(text)) return 'must be an object';
  if (/list/i.test(text)) return 'must be a list';
  const scalar = /Expected type "(\w+)"/.exec(text)?.[1];
  if (scalar) return `must be a valid ${scalar.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}`;
  return 'is invalid';
}
