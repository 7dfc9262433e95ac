import { NATIVE_MINT } from '@solana/spl-token';

/** SOL, named as a token by the wrapped-SOL mint (So1111…1112), on every cluster and environment. */
export const SOL_MINT = NATIVE_MINT.toBase58();

export type { TokenInfo } from '../chain/swap-quote.js';
import type { TokenInfo } from '../chain/swap-quote.js';

export const SOL: TokenInfo = { address: SOL_MINT, symbol: 'SOL', name: 'Solana', decimals: 9 };
