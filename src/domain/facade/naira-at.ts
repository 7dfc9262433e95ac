import { parseUnits } from '../money/decimal.js';
import type { JsonAnswer } from './upstream-json.js';

/**
 * An NGN amount of an upstream answer, in kobo, read from the digits the upstream wrote at a JSON
 * pointer, never through a binary float. More than two decimals is not an NGN amount: the answer
 * is then not in the spec's shape (a counted fault).
 */
export function koboAt(answer: JsonAnswer<unknown>, pointer: string): bigint {
  const text = answer.numberText(pointer);
  try {
    if (text === undefined) throw new Error('no number');
    return parseUnits(text, 2, 'amount');
  } catch {
    throw answer.unreadable(pointer);
  }
}
