import { PublicKey } from '@solana/web3.js';
import { badInput } from '../errors.js';
import { decimalText, formatUnits, parseUnits } from '../money/decimal.js';

/** A decimal string (or plain JSON number) in token units as raw base units; more decimals than the mint has is a 400. */
export function rawFromDecimal(value: unknown, decimals: number, field = 'amount'): bigint {
  if (typeof value !== 'string' && typeof value !== 'number')
    throw badInput(field, `${field} must be a positive decimal number of tokens, like "1.5".`);
  const raw = parseUnits(decimalText(value, field), decimals, field);
  if (raw <= 0n) throw badInput(field, `${field} must be above zero.`);
  if (raw >= 1n << 64n) throw badInput(field, `${field} is larger than a token account can hold.`);
  return raw;
}

/** Raw base units as a decimal string in token units, without trailing zeros ("1.5", "0.000001"). */
export const decimalFromRaw = formatUnits;

/** A base58 public key, or a 400 naming the field. */
export function checkAddress(value: unknown, field: string): PublicKey {
  if (typeof value !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(value))
    throw badInput(field, `${field} must be a base58 Solana address.`);
  try {
    return new PublicKey(value);
  } catch {
    throw badInput(field, `${field} must be a base58 Solana address.`);
  }
}

export const LAMPORTS_DECIMALS = 9;
