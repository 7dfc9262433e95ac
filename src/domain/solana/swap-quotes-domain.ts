import type { Caller } from '../users/user-directory.js';
import type { QuoteInput, SolanaExchange } from './exchange-service.js';
import type { SwapQuoteView } from './swap-quote.js';

/**
 * Swap quotes as the graph reads them where the spec shows a path (token to token). Bound once at
 * start-up: to this gateway's own SolanaExchange (service mode) or to the upstream REST v1
 * deployment (facade mode, facade/upstream-swap-quotes.ts).
 */
export interface SwapQuotesDomain {
  quote(caller: Caller, input: QuoteInput): Promise<SwapQuoteView>;
}

/** Quotes as this gateway makes them (stored for a short time, to swap by id). */
export const localSwapQuotes = (exchange: SolanaExchange): SwapQuotesDomain => ({
  quote: ({ principal }, input) => exchange.quote(principal, input),
});
