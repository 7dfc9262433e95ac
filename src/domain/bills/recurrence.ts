/**
 * Schedule times in Africa/Lagos (UTC+1 all year, no daylight saving): a run "every month at 09:00"
 * is 09:00 in Lagos. Patterns: `daily`, `weekly` (same weekday), `monthly` (same day of month; a
 * run anchored on the 29th–31st falls on the month's last day in shorter months).
 */
export const RECURRENCE_PATTERNS = ['daily', 'weekly', 'monthly'] as const;
export type RecurrencePattern = (typeof RECURRENCE_PATTERNS)[number];

const LAGOS_OFFSET_MS = 3600_000;

/** The run after `previous`, for a schedule first run at `anchor`. */
export function nextRun(anchor: Date, previous: Date, pattern: RecurrencePattern): Date {
  if (pattern === 'daily') return new Date(previous.getTime() + 86_400_000);
  if (pattern === 'weekly') return new Date(previous.getTime() + 7 * 86_400_000);
  // Work on Lagos wall-clock fields, expressed as UTC fields of a shifted date.
  const local = new Date(anchor.getTime() + LAGOS_OFFSET_MS);
  const previousLocal = new Date(previous.getTime() + LAGOS_OFFSET_MS);
  const year = previousLocal.getUTCFullYear();
  const month = previousLocal.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(local.getUTCDate(), lastDay);
  const next = Date.UTC(
    year,
    month,
    day,
    local.getUTCHours(),
    local.getUTCMinutes(),
    local.getUTCSeconds(),
    local.getUTCMilliseconds(),
  );
  return new Date(next - LAGOS_OFFSET_MS);
}
