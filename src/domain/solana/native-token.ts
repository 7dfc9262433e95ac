import { NATIVE_MINT } from '@solana/spl-token';

/** SOL, named as a token by the wrapped-SOL mint (So1111…1112), on every cluster and environment. */
export const SOL_MINT = NATIVE_MINT.toBase58();

export interface TokenInfo {
  address: string;
  symbol: string;
  name: string;
  decimals: number;
  logoUri?: string;
}

export const SOL: TokenInfo = { address: SOL_MINT, symbol: 'SOL', name: 'Solana', decimals: 9 };
