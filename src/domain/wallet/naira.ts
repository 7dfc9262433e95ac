import { badInput } from '../errors.js';

/** The largest amount one operation may move: ₦10,000,000.00. */
export const MAX_AMOUNT_KOBO = 1_000_000_000n;

/**
 * An NGN amount from the API (a JSON number of naira, at most two decimals) as kobo. Parsed from
 * the number's decimal text, never by multiplying a float: 0.07 is 7 kobo, 19.99 is 1999.
 */
export function koboFrom(value: unknown, field = 'amount'): bigint {
  if (typeof value !== 'number') throw badInput(field, `${field} must be a number of naira, e.g. 1500 or 1500.50.`);
  if (!Number.isFinite(value)) throw badInput(field, `${field} must be a finite number.`);
  if (value <= 0) throw badInput(field, `${field} must be greater than 0.`);
  const text = String(value);
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) throw badInput(field, `${field} must have at most two decimal places (kobo), got ${text}.`);
  const kobo = BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  if (kobo > MAX_AMOUNT_KOBO) throw badInput(field, `${field} must be at most ${nairaText(MAX_AMOUNT_KOBO)} naira.`);
  return kobo;
}

/** `koboFrom` for an optional amount: undefined when none was given. */
export const optionalKoboFrom = (value: unknown, field = 'amount'): bigint | undefined =>
  value === undefined || value === null ? undefined : koboFrom(value, field);

/** Kobo as naira decimal text, "1500.5" → "1500.50". */
export function nairaText(kobo: bigint): string {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  return `${negative ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Kobo as a JSON number of naira (exact for every amount the API allows). */
export const nairaNumber = (kobo: bigint): number => Number(nairaText(kobo));
