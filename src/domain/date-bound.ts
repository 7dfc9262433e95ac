import { badInput } from './errors.js';

/**
 * A bound of a date filter, as every list takes it: a calendar date (YYYY-MM-DD, a day in
 * Africa/Lagos, which has no daylight saving: UTC+1) or an RFC 3339 date-time (that instant).
 */
export type DateBound = { kind: 'date'; date: string } | { kind: 'instant'; at: Date };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 86_400_000;

/** Parses a filter bound, or null when the text is neither form (the caller names the field). */
export function parseDateBound(text: string): DateBound | null {
  const date = DATE.exec(text);
  if (date) {
    const at = new Date(`${text}T00:00:00+01:00`);
    // 2026-02-30 parses as 2 March: only a real calendar day is a date.
    const lagos = new Date(at.getTime() + 3_600_000);
    if (Number.isNaN(at.getTime()) || lagos.getUTCDate() !== Number(date[3])) return null;
    return { kind: 'date', date: text };
  }
  if (DATE_TIME.test(text)) {
    const at = new Date(text);
    if (!Number.isNaN(at.getTime())) return { kind: 'instant', at };
  }
  return null;
}

export function dateBoundFrom(value: unknown, field: string): DateBound {
  const bound = typeof value === 'string' ? parseDateBound(value.trim()) : null;
  if (!bound)
    throw badInput(
      field,
      `${field} must be a date (YYYY-MM-DD, Africa/Lagos) or a date-time such as 2026-01-31T09:00:00Z.`,
    );
  return bound;
}

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
  const start = from ? startOf(from) : undefined;
  const end = to ? endOf(to) : undefined;
  if (start && end && end <= start) throw badInput(names.to, `${names.to} must not be before ${names.from}.`);
  return { ...(start ? { from: start } : {}), ...(end ? { to: end } : {}) };
}
