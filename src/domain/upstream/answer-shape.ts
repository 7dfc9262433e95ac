import { FormatRegistry, type Static, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ValueError } from '@sinclair/typebox/errors';
import { generate, type Upstream } from './upstream-error.js';

/**
 * A provider answer's documented shape, compiled once when its adapter loads. Only the fields the
 * adapter reads are required and extra fields are allowed: a provider adds fields freely, and one
 * the gateway never reads must not turn a good answer into a fault.
 */
export interface AnswerShape<T> {
  /**
   * Where the first field that does not match sits (a JSON pointer such as `/data/0/id`, `/` for
   * the whole answer), or undefined when the answer matches. Never the value: an answer may carry
   * card data or secrets, so nothing of it goes into errors or logs.
   */
  mismatchAt(value: unknown): string | undefined;
  /** The type a matching answer has (carried for the compiler only). */
  readonly matches?: (value: unknown) => value is T;
}

/** The type of an answer matching a shape. */
export type AnswerOf<S> = S extends AnswerShape<infer T> ? T : never;

export function answerShape<S extends TSchema>(schema: S): AnswerShape<Static<S>> {
  const compiled = TypeCompiler.Compile(schema);
  return {
    mismatchAt: (value) => {
      if (compiled.Check(value)) return undefined;
      const first = compiled.Errors(value).First();
      return (first && deepestPath(first)) || '/';
    },
  };
}

/**
 * A union's error stands at the union ("expected one of these"): the path that says most is the
 * deepest one its variants reached (a list whose third row lacks an id, rather than the list).
 */
function deepestPath(error: ValueError): string {
  let deepest = error.path;
  for (const variant of error.errors) {
    const first = variant.First();
    if (!first) continue;
    const path = deepestPath(first);
    if (path.split('/').length > deepest.split('/').length) deepest = path;
  }
  return deepest;
}

/** A pointer inside an answer whose part at `at` was checked: `/data` and `/0/id` are `/data/0/id`. */
export function pointerWithin(at: string | undefined, path: string): string {
  if (!at) return path;
  return path === '/' ? at : `${at}${path}`;
}

/** `null` allowed beside the type (providers send null for "none"). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A field that may be absent or null. */
export const Maybe = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/**
 * A decimal amount as providers write it: a JSON number or a decimal string ("500.0000"), within
 * what money can be (no exponent, no NaN, bounded so turning it into minor units stays exact).
 */
export const DecimalAmount = Type.Union([
  Type.Number({ minimum: -1e15, maximum: 1e15 }),
  Type.String({ pattern: '^-?\\d{1,18}(\\.\\d{1,18})?$' }),
]);

/** An amount documented as a JSON number (bounded as above). */
export const NumberAmount = Type.Number({ minimum: -1e15, maximum: 1e15 });

/** A whole number of base units written as a string, as Jupiter and Solana nodes do ("100000000"). */
export const RawUnits = Type.String({ pattern: '^\\d{1,40}$' });

/** A non-negative whole number that fits a JavaScript number exactly (slots, heights, lamports). */
export const SafeInteger = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
FormatRegistry.Set('upstream-timestamp', (value) => ISO_8601.test(value) && !Number.isNaN(Date.parse(value)));

/**
 * A date or date-time as ISO 8601 writes it ("2026-01-31", "2026-01-31T10:00:00.000Z",
 * "2026-01-31 10:00:00") that is a real time: `new Date` of it is never an Invalid Date.
 */
export const Timestamp = Type.String({ format: 'upstream-timestamp' });

/** An id providers write as a number or a string. */
export const NumberOrString = Type.Union([Type.Integer(), Type.String({ minLength: 1 })]);

/**
 * Reads what a shape cannot check (an amount with more decimals than its currency has, a
 * transaction that does not deserialize) out of an answer that matched it: a failure is the same
 * upstream fault as a mismatch at `at`, never an error the partner sees as a 500.
 */
export function readAnswerPart<T>(fault: { upstream: Upstream; mutating: boolean }, at: string, read: () => T): T {
  try {
    return read();
  } catch {
    throw generate({ ...fault, httpStatus: 200, unreadable: true, mismatch: at });
  }
}
