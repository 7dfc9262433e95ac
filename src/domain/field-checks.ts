import { badInput, DomainError, type FieldProblem, InputProblems } from './errors.js';

/*
 * Input checked field by field, every field even after one is refused, so a request with several
 * bad fields is answered once, naming each, rather than one field per try.
 */

/** One parser per field, each throwing `badInput` naming its field when the value is bad. */
export type FieldParsers = Record<string, () => unknown>;

type Parsed<P extends Record<string, () => unknown>> = { [K in keyof P]: ReturnType<P[K]> };

/**
 * Each field's parser run, every one even after a refusal, so one answer names every bad field:
 * their values when all passed, else the one BAD_USER_INPUT naming each bad field in order.
 * Parsers are the throwing ones used everywhere (`koboFrom`, `referenceFrom`, `optionalText`).
 */
export function checkFields<P extends Record<string, () => unknown>>(parsers: P): Parsed<P> {
  const problems = new InputProblems();
  const values: Record<string, unknown> = {};
  for (const [name, parse] of Object.entries(parsers)) values[name] = problems.check(parse);
  problems.throwIfAny();
  return values as Parsed<P>;
}

/**
 * `checkFields` for parsers of which some must wait (a bank list, a catalogue lookup). They run
 * together; their refusals are named in the parsers' order.
 */
export async function checkFieldsAwaiting<P extends Record<string, () => unknown>>(
  parsers: P,
): Promise<{ [K in keyof P]: Awaited<ReturnType<P[K]>> }> {
  const entries = Object.entries(parsers);
  const outcomes = await Promise.allSettled(entries.map(async ([, parse]) => parse()));
  const problems = new InputProblems();
  const values: Record<string, unknown> = {};
  // A field the caller got wrong is answered before a dependency that failed (a provider down):
  // retrying cannot help the first.
  let failure: { error: unknown } | undefined;
  entries.forEach(([name], i) => {
    const outcome = outcomes[i]!;
    try {
      values[name] = problems.check(() => {
        if (outcome.status === 'rejected') throw outcome.reason;
        return outcome.value;
      });
    } catch (error) {
      failure ??= { error };
    }
  });
  problems.throwIfAny();
  if (failure) throw failure.error;
  return values as { [K in keyof P]: Awaited<ReturnType<P[K]>> };
}

/** A free-text field trimmed, null when empty, refused (naming the field) over `max` characters. */
export function optionalText(value: string | null | undefined, field: string, max: number): string | null {
  const text = value?.trim() || null;
  if (text && text.length > max) throw badInput(field, `${field} must be at most ${max} characters.`);
  return text;
}

/** A required text field trimmed, refused with `message` (naming the field) when empty. */
export function requiredText(value: string | null | undefined, field: string, message: string): string {
  const text = value?.trim();
  if (!text) throw badInput(field, message);
  return text;
}

/**
 * The problems the parsers find in input that a schema has already refused in part (REST: a
 * body's shape): each parser runs, and one that cannot read its field at all (a TypeError on a
 * number where a string belongs) is skipped, since the schema's refusal names that field.
 */
export function problemsOf(parsersOf: () => FieldParsers): FieldProblem[] {
  let parsers: FieldParsers;
  try {
    parsers = parsersOf();
  } catch {
    return []; // the input's shape is too far off to read field by field: the schema's refusal stands
  }
  const problems: FieldProblem[] = [];
  for (const parse of Object.values(parsers)) {
    try {
      parse();
    } catch (error) {
      if (error instanceof DomainError && error.code === 'BAD_USER_INPUT')
        problems.push(...(error.details ?? [{ field: error.field ?? 'input', message: error.message }]));
    }
  }
  return problems;
}
