import * as Core from '../chain/swap-quote.js';
import type { ExchangeProvider, SwapMode } from './exchange-provider.js';
import { SOL_MINT } from './native-token.js';
import type { SolanaNetwork } from './networks.js';

export { QUOTE_TTL_SECONDS } from '../chain/swap-quote.js';

/** The seed's swap quote on a Solana cluster (chain/swap-quote.ts). */
export type SwapQuoteView = Core.SwapQuoteView<SolanaNetwork>;

/**
 * What a stored quote keeps besides its view: enough to re-quote and hold the price to it. Stored as
 * JSON in Solana's terms (mints), as quotes stored before the core named assets were.
 */
export interface StoredQuote {
  view: SwapQuoteView;
  request: { inputMint: string; outputMint: string; amountRaw: string; swapMode: SwapMode; slippageBps: number };
  otherAmountThresholdRaw: string;
}

/** The Solana quote's facts: the network fee is 5,000 lamports a signature, priced at SOL's USD price. */
export type QuoteFacts = Omit<Core.QuoteFacts<SolanaNetwork>, 'feeFraction' | 'gas' | 'estimatedSwapSeconds'> & {
  provider: ExchangeProvider;
};

export function quoteView({ provider, ...f }: QuoteFacts): SwapQuoteView {
  return Core.quoteView({
    ...f,
    feeFraction: provider.feeFraction(f.quote),
    gas: { amount: provider.signatures(f.quote) * 0.000005, usd: f.prices.get(SOL_MINT) },
    estimatedSwapSeconds: provider.estimatedSwapSeconds,
  });
}
