import { badInput } from '../errors.js';
import { decimalText, formatUnits, parseUnits } from '../money/decimal.js';

/** A positive decimal amount in token units (string, or a plain JSON number) as raw units; more decimals than the asset has is a 400. */
export function evmRawFromDecimal(value: unknown, decimals: number, field = 'amount'): bigint {
  if (typeof value !== 'string' && typeof value !== 'number')
    throw badInput(field, `${field} must be a positive decimal number of tokens, like "1.5".`);
  const raw = parseUnits(decimalText(value, field), decimals, field);
  if (raw <= 0n) throw badInput(field, `${field} must be above zero.`);
  // An ERC-20 balance and a transaction's value are uint256.
  if (raw >= 1n << 256n) throw badInput(field, `${field} is larger than an EVM amount can be.`);
  return raw;
}

/** An amount as the API shows it: token units as an exact decimal string, and the raw integer beside it. */
export interface EvmAmount {
  amount: string;
  amountRaw: bigint;
}

export const evmAmount = (raw: bigint, decimals: number): EvmAmount => ({
  amount: formatUnits(raw, decimals),
  amountRaw: raw,
});
