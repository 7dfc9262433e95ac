import { DomainError } from '../domain/errors.js';

/**
 * Text every boundary refuses before it reaches a query or a log line: NUL (U+0000), which
 * PostgreSQL cannot store in text and which truncates strings in C libraries, and unpaired UTF-16
 * surrogates, which are not text at all (they cannot be encoded as UTF-8). One scan serves REST
 * (path, query, body), GraphQL (variables and the document's string literals), WebSocket
 * operations and the headers read as data.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string is refused, or undefined when it is acceptable text. */
export function badTextReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate, which is not valid text';
  return undefined;
}

export interface BadText {
  /** Dotted path of the offending value (or key) below the root, e.g. `customer.name` or `items.0`. */
  field: string;
  reason: string;
}

/**
 * The first string (value or object key) at any depth of `value` that is not acceptable text.
 * Walks with an explicit stack, so a deeply nested JSON body cannot overflow the call stack.
 */
export function findBadText(value: unknown, root = ''): BadText | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      const reason = badTextReason(current);
      if (reason) return { field: path || 'value', reason };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], join(path, String(i))]);
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const keyReason = badTextReason(key);
        // The key itself is not echoed: its text is the problem.
        if (keyReason) return { field: path || 'body', reason: `has a field name that ${keyReason}` };
        stack.push([child, join(path, key)]);
      }
    }
  }
  return undefined;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The 400 for refused text, naming the field and never repeating its value. */
export function badTextError({ field, reason }: BadText, where?: string): DomainError {
  const message = `${field} ${reason}.`;
  return new DomainError('BAD_USER_INPUT', where ? `Invalid ${where}: ${message}` : message, {
    field,
    details: [{ field, message: `${field} ${reason}` }],
  });
}

/** Headers whose values the gateway reads as data (stored, compared, logged). */
export const DATA_HEADERS = ['idempotency-key'] as const;

/**
 * Checks a request's path parameters, query string, body and data headers; the first bad string
 * becomes a 400. Query and path names are reported as themselves, body fields by their path.
 */
export function assertCleanRequest(request: {
  params?: unknown;
  query?: unknown;
  body?: unknown;
  headers: Record<string, string | string[] | undefined>;
}): void {
  assertCleanPart(request.params, 'path');
  assertCleanPart(request.query, 'query');
  assertCleanPart(request.body, 'body');
  for (const name of DATA_HEADERS) {
    const header = request.headers[name];
    const bad = header === undefined ? undefined : findBadText(header, name);
    if (bad) throw badTextError({ ...bad, field: headerName(name) }, 'header');
  }
}

function assertCleanPart(value: unknown, where: string): void {
  if (value === undefined || value === null || isEmptyObject(value)) return;
  // Raw bytes (a facade's pass-through body) are not read here as text: the upstream parses them.
  if (Buffer.isBuffer(value)) return;
  const bad = findBadText(value);
  if (bad) throw badTextError(bad, where);
}

/** An object without a property, as most requests' path parameters and query are: nothing to walk. */
function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  for (const _key in value) return false;
  return true;
}

const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
