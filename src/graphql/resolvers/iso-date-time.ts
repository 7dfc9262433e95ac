/**
 * `Date#toISOString`, byte for byte, computed from the time value with integer arithmetic: V8's
 * own toISOString cost about 450 ns a call here against about 140 ns, and every date-time of every
 * answer goes through it (three in `me`, two or three per record of a list). Years outside
 * 0000–9999 (written with a sign and six digits) and invalid dates are left to toISOString itself.
 */
const DAY_MS = 86_400_000;
const FIRST_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const END_MS = 253_402_300_800_000; // 10000-01-01T00:00:00.000Z
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

export function isoDateTime(date: Date): string {
  const time = date.getTime();
  // Also false for NaN: an invalid Date throws from toISOString as before.
  if (!(time >= FIRST_MS && time < END_MS)) return date.toISOString();
  const days = Math.floor(time / DAY_MS);
  let ms = time - days * DAY_MS;
  // Days since 1970-01-01 to a civil date (H. Hinnant's days_from_civil, inverted), on 400-year eras
  // that start on March 1st so that the leap day ends each year.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const marchMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * marchMonth + 2) / 5) + 1;
  const month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9;
  const year = era * 400 + yearOfEra + (month <= 2 ? 1 : 0);
  const hours = Math.floor(ms / 3_600_000);
  ms -= hours * 3_600_000;
  const minutes = Math.floor(ms / 60_000);
  ms -= minutes * 60_000;
  const seconds = Math.floor(ms / 1000);
  ms -= seconds * 1000;
  return `${TWO_DIGITS[Math.floor(year / 100)]}${TWO_DIGITS[year % 100]}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[ms]}Z`;
}
