/**
 * Compose's variable interpolation (https://docs.docker.com/reference/compose-file/interpolation/),
 * as `docker compose` applies it to every string value of compose.yaml: `$$` is a literal `$`;
 * `$VAR` and `${VAR}` are the value (empty when unset); `${VAR:-default}` / `${VAR-default}` the
 * default when unset or empty / unset; `${VAR:?message}` / `${VAR?message}` an error; `${VAR:+alt}` /
 * `${VAR+alt}` the alternative when set. Defaults, messages and alternatives are interpolated too
 * (`${A:-${B}}`).
 */

export class InterpolationError extends Error {}

export type Environment = Readonly<Record<string, string | undefined>>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

export function interpolate(text: string, env: Environment): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '$') {
      out += c;
      i += 1;
      continue;
    }
    const next = text[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '{') {
      const end = closingBrace(text, i + 2);
      out += expand(text.slice(i + 2, end), env);
      i = end + 1;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (name === undefined) {
        out += '$';
        i += 1;
      } else {
        out += env[name] ?? '';
        i += 1 + name.length;
      }
    }
  }
  return out;
}

/** Index of the `}` that closes a `${` whose body starts at `from` (nested `${…}` skipped). */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i += 1) {
    if (text[i] === '$' && text[i + 1] === '$') i += 1;
    else if (text[i] === '$' && text[i + 1] === '{') {
      depth += 1;
      i += 1;
    } else if (text[i] === '}' && --depth === 0) return i;
  }
  throw new InterpolationError(`unclosed \${ in ${JSON.stringify(text)}`);
}

function expand(body: string, env: Environment): string {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(body);
  if (!match) throw new InterpolationError(`invalid interpolation \${${body}}`);
  const [, name = '', operator, argument = ''] = match;
  const value = env[name];
  const set = value !== undefined;
  const filled = set && value !== '';
  switch (operator) {
    case undefined:
      return value ?? '';
    case ':-':
      return filled ? value : interpolate(argument, env);
    case '-':
      return set ? value : interpolate(argument, env);
    case ':?':
    case '?':
      if (operator === ':?' ? filled : set) return value ?? '';
      throw new InterpolationError(`required variable ${name} is missing a value: ${interpolate(argument, env)}`);
    case ':+':
      return filled ? interpolate(argument, env) : '';
    case '+':
      return set ? interpolate(argument, env) : '';
    default:
      throw new InterpolationError(`invalid interpolation \${${body}}`);
  }
}

/** Every string value of a parsed YAML document interpolated (keys are left as they are, as Compose does). */
export function interpolateTree(node: unknown, env: Environment): unknown {
  if (typeof node === 'string') return interpolate(node, env);
  if (Array.isArray(node)) return node.map((item) => interpolateTree(item, env));
  if (node && typeof node === 'object')
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolateTree(value, env)]));
  return node;
}
