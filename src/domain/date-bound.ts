import { badInput } from './errors.js';

/**
 * A bound of a date filter, as every list takes it: a calendar date (YYYY-MM-DD, a day in
 * Africa/Lagos, which has no daylight saving: UTC+1) or an RFC 3339 date-time (that instant).
 */
export type DateBound = { kind: 'date'; date: string } | { kind: 'instant'; at: Date };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 86_400_000;

/** Whether YYYY-MM-DD names a real calendar day (Date would read 2026-02-30 as 2 March). */
function isCalendarDay(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const at = new Date(Date.UTC(year, month - 1, day));
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day;
}

/**
 * Parses a filter bound by its shape, or null when the text is neither form. A bound of the right
 * shape on no calendar day (2026-02-30) parses as an invalid bound, which `dateRange` refuses naming
 * the field (a scalar cannot name it).
 */
export function parseDateBound(text: string): DateBound | null {
  if (DATE.test(text)) return { kind: 'date', date: text };
  if (DATE_TIME.test(text))
    return { kind: 'instant', at: isCalendarDay(text.slice(0, 10)) ? new Date(text) : new Date(Number.NaN) };
  return null;
}

const isReal = (bound: DateBound) =>
  bound.kind === 'date' ? isCalendarDay(bound.date) : !Number.isNaN(bound.at.getTime());

const lagosMidnight = (date: string) => new Date(`${date}T00:00:00+01:00`);

/** The first instant a start bound includes. */
export function startOf(bound: DateBound): Date {
  return bound.kind === 'date' ? lagosMidnight(bound.date) : bound.at;
}

/** The first instant an end bound excludes: a date includes its whole day; a date-time is "before". */
export function endOf(bound: DateBound): Date {
  return bound.kind === 'date' ? new Date(lagosMidnight(bound.date).getTime() + DAY_MS) : bound.at;
}

/** Both bounds of a filter, refusing an end that is not after the start. */
export function dateRange(
  from: DateBound | undefined,
  to: DateBound | undefined,
  names: { from: string; to: string },
): { from?: Date; to?: Date } {
  for (const [bound, name] of [
    [from, names.from],
    [to, names.to],
  ] as const) {
    if (bound && !isReal(bound))
      throw badInput(
        name,
        `${name} is not a real date: use YYYY-MM-DD (Africa/Lagos) or a date-time such as 2026-01-31T09:00:00Z.`,
      );
  }
  const start = from ? startOf(from) : undefined;
  const end = to ? endOf(to) : undefined;
  if (start && end && end <= start) throw badInput(names.to, `${names.to} must not be before ${names.from}.`);
  return { ...(start ? { from: start } : {}), ...(end ? { to: end } : {}) };
}
