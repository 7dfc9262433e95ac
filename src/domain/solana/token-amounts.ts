import { PublicKey } from '@solana/web3.js';
import { badInput } from '../errors.js';

/** A decimal string in token units ("1.5") as raw base units, refusing more decimals than the mint has. */
export function rawFromDecimal(value: unknown, decimals: number, field = 'amount'): bigint {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : typeof value === 'string' ? value.trim() : '';
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw badInput(field, `${field} must be a positive decimal number of tokens, like "1.5".`);
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) throw badInput(field, `${field} has ${fraction.length} decimals; this token has ${decimals}.`);
  const raw = BigInt(match[1]! + fraction.padEnd(decimals, '0'));
  if (raw <= 0n) throw badInput(field, `${field} must be above zero.`);
  if (raw >= 1n << 64n) throw badInput(field, `${field} is larger than a token account can hold.`);
  return raw;
}

/** Raw base units as a decimal string in token units, without trailing zeros ("1.5", "0.000001"). */
export function decimalFromRaw(raw: bigint, decimals: number): string {
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A base58 public key, or a 400 naming the field. */
export function checkAddress(value: unknown, field: string): PublicKey {
  if (typeof value !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(value)) throw badInput(field, `${field} must be a base58 Solana address.`);
  try {
    return new PublicKey(value);
  } catch {
    throw badInput(field, `${field} must be a base58 Solana address.`);
  }
}

export const LAMPORTS_DECIMALS = 9;
