import { badInput, InputProblems } from '../errors.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
export const MAX_ORIGINS = 20;

/**
 * A Connect app's browser origins, checked: each exactly an origin as browsers send it
 * (`scheme://host[:port]`, no path, no trailing slash), https or http on a loopback host; no `*`
 * (an app that would take any origin has none to register). Answered deduplicated, in order.
 */
export function checkOrigins(given: readonly string[], field: string): string[] {
  if (given.length > MAX_ORIGINS) throw badInput(field, `${field} must list at most ${MAX_ORIGINS} origins.`);
  const problems = new InputProblems();
  given.forEach((origin, i) => problems.check(() => checkOrigin(origin.trim(), `${field}[${i}]`)));
  problems.throwIfAny();
  return [...new Set(given.map((o) => o.trim()))];
}

function checkOrigin(origin: string, field: string): void {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    throw badInput(field, `${field} must be an origin such as https://app.example.com.`);
  }
  if (parsed.origin !== origin)
    throw badInput(
      field,
      `${field} must be an origin alone (scheme://host[:port], no path or trailing slash): ${parsed.origin}?`,
    );
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)))
    throw badInput(field, `${field} must use https (http only on localhost, 127.0.0.1 or [::1]).`);
}
