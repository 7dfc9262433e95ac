/**
 * A fake's "malformed answer" mode: the 2xx answers of the calls a spoiler matches are sent in a
 * shape other than the documented one, while the fake does whatever the call does (a charge is
 * still made, a bill still paid). That is the case an adapter must not trust: the provider acted,
 * and its answer cannot be read.
 */
export interface Spoiler {
  /** The HTTP method, or the JSON-RPC method for the Solana node; any when absent. */
  method?: string;
  /** The path with its query (`/v4/charges`, `/v3/bills?from=…`); for the Solana node, unused. */
  path?: RegExp;
  /** The body to send instead, made from the documented one (a copy: change it freely). */
  body: (documented: any) => unknown;
  /** How many answers to spoil; every matching one until `clear()` when absent. */
  times?: number;
}

export class MalformedAnswers {
  private spoilers: Spoiler[] = [];

  /** Spoils matching answers from now on. */
  add(spoiler: Spoiler): void {
    this.spoilers.push({ ...spoiler });
  }

  clear(): void {
    this.spoilers = [];
  }

  /** The body a 2xx answer to this call goes out with: the documented one unless a spoiler matches. */
  apply(method: string, path: string, documented: unknown): unknown {
    const spoiler = this.spoilers.find(
      (s) => (!s.method || s.method === method) && (!s.path || s.path.test(path)) && (s.times ?? 1) > 0,
    );
    if (!spoiler) return documented;
    if (spoiler.times !== undefined) spoiler.times--;
    return spoiler.body(structuredClone(documented));
  }
}

type Path = Array<string | number>;

/** The ways a documented answer is spoiled, each at a path inside it (`['data', 0, 'id']`). */
export const spoil = {
  /** `null` for the whole body. */
  nullBody: () => () => null,
  /** The value at `path` replaced. */
  set:
    (path: Path, value: unknown) =>
    (body: any): unknown =>
      setAt(body, path, value),
  /** The field at `path` removed. */
  drop:
    (path: Path) =>
    (body: any): unknown => {
      const parent = walk(body, path.slice(0, -1));
      if (parent && typeof parent === 'object') delete parent[path.at(-1) as never];
      return body;
    },
  /** The array at `path` turned into an object holding it (`data: {items: [...]}`). */
  notArray:
    (path: Path) =>
    (body: any): unknown =>
      setAt(body, path, { items: walk(body, path) }),
  /** The object at `path` wrapped in an array (`data: [{…}]`). */
  asArray:
    (path: Path) =>
    (body: any): unknown =>
      setAt(body, path, [walk(body, path)]),
  /** The number at `path` written as a string (`"1000"` where 1000 is documented). */
  numberAsString:
    (path: Path) =>
    (body: any): unknown =>
      setAt(body, path, String(walk(body, path))),
};

function walk(body: any, path: Path): any {
  return path.reduce((node, key) => (node === null || node === undefined ? undefined : node[key]), body);
}

function setAt(body: any, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = walk(body, path.slice(0, -1));
  if (parent && typeof parent === 'object') parent[path.at(-1) as never] = value as never;
  return body;
}

/** A random spoiling, as a property test draws it: what to do, where (an index into the answer's paths), with what. */
export interface RandomSpoiling {
  kind: 'replace' | 'drop' | 'whole';
  pick: number;
  value: unknown;
}

/** Spoils a documented answer as drawn: one of its fields replaced or dropped, or the whole body replaced. */
export const spoilRandomly =
  (drawn: RandomSpoiling) =>
  (body: any): unknown => {
    const paths = pathsOf(body);
    if (drawn.kind === 'whole' || paths.length === 0) return drawn.value;
    const path = paths[drawn.pick % paths.length]!;
    return drawn.kind === 'drop' ? spoil.drop(path)(body) : spoil.set(path, drawn.value)(body);
  };

/** Every path inside a JSON value, parents before children. */
function pathsOf(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const keys: Array<string | number> = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((key) => [[...at, key], ...pathsOf((value as any)[key], [...at, key])]);
}
