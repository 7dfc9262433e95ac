import { badInput } from '../errors.js';

/**
 * Decimal text ⇄ integer units, exactly, with bigint: token amounts, rates and fiat amounts never
 * pass through a binary float. `parseUnits("12.5", 6)` is 12_500_000n.
 */
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Parses a non-negative decimal string into units of 10^-decimals; more decimals than allowed → 400 on `field`. */
export function parseUnits(text: string, decimals: number, field: string): bigint {
  const match = DECIMAL.exec(text.trim());
  if (!match)
    throw badInput(
      field,
      `${field} must be a positive decimal number such as "25" or "25.5", got ${JSON.stringify(text)}.`,
    );
  const [, whole, fraction = ''] = match;
  if (fraction.length > decimals)
    throw badInput(field, `${field} has ${fraction.length} decimal places; at most ${decimals} are allowed.`);
  return BigInt(whole!) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}

/** Units of 10^-decimals as decimal text, without trailing zeros ("12.5", "3"). */
export function formatUnits(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Units of 10^-decimals as decimal text with exactly `decimals` places ("19701.00"): for fiat. */
export function formatFixed(units: bigint, decimals: number): string {
  const text = formatUnits(units, decimals);
  const [whole, fraction = ''] = text.split('.');
  return decimals === 0 ? whole! : `${whole}.${fraction.padEnd(decimals, '0')}`;
}

/** A JSON number's text as a decimal string, refusing what is not a plain decimal (1e21, NaN). */
export function decimalText(value: string | number, field: string): string {
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (!DECIMAL.test(text))
    throw badInput(
      field,
      `${field} must be a positive decimal number such as "25" or "25.5", got ${JSON.stringify(value)}.`,
    );
  return text;
}

/** How many decimal places a decimal string has. */
export const scaleOf = (text: string): number => text.split('.')[1]?.length ?? 0;

/** amount (units of 10^-amountDecimals) × rate (decimal text) in units of 10^-resultDecimals, rounded down. */
export function multiplyDown(amount: bigint, amountDecimals: number, rate: string, resultDecimals: number): bigint {
  const rateScale = scaleOf(rate);
  const rateUnits = parseUnits(rate, rateScale, 'rate');
  return (amount * rateUnits * 10n ** BigInt(resultDecimals)) / 10n ** BigInt(amountDecimals + rateScale);
}
