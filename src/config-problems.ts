import type { TSchema } from '@sinclair/typebox';
import type { ValueError } from '@sinclair/typebox/value';

/**
 * What a configuration variable must be, said from its schema alone. A config error names the
 * variable and this, never the value it was given: a malformed SECRETS_KEY, a short
 * IDEMPOTENCY_SECRET or an SMTP_URL with its password would otherwise be copied to the terminal
 * and to whatever collects the process's output.
 */
export function expectedOf(schema: TSchema): string {
  if (typeof schema.expected === 'string') return schema.expected;
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => 'const' in s))
    return `one of ${schema.anyOf.map((s: TSchema) => String(s.const)).join(', ')}`;
  switch (schema.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      return `an integer${rangeOf(schema)}`;
    case 'number':
      return `a number${rangeOf(schema)}`;
    case 'string':
      if (typeof schema.minLength === 'number' && schema.minLength > 1)
        return `at least ${schema.minLength} characters`;
      return 'a non-empty text';
    default:
      return 'a valid value';
  }
}

function rangeOf(schema: TSchema): string {
  const low =
    typeof schema.exclusiveMinimum === 'number'
      ? `more than ${schema.exclusiveMinimum}`
      : typeof schema.minimum === 'number'
        ? `${schema.minimum}`
        : undefined;
  const high = typeof schema.maximum === 'number' ? `${schema.maximum}` : undefined;
  if (low && high) return low.startsWith('more') ? `, ${low} and at most ${high}` : ` from ${low} to ${high}`;
  if (low) return low.startsWith('more') ? `, ${low}` : ` of at least ${low}`;
  if (high) return ` of at most ${high}`;
  return '';
}

/** One line per bad variable (a variable failing several checks is named once). */
export function problemLines(errors: Iterable<ValueError>): string[] {
  const lines = new Map<string, string>();
  for (const error of errors) {
    const name = error.path.slice(1) || '(root)';
    if (!lines.has(name)) lines.set(name, `  ${name}: expected ${expectedOf(error.schema)}`);
  }
  return [...lines.values()];
}
