import type { Caller } from '../users/user-directory.js';
import type { QuoteInput, SolanaExchange, SwapRequest } from './exchange-service.js';
import type { SwapSubmitted } from './solana-sends.js';
import type { SwapQuoteView } from './swap-quote.js';

/**
 * The Solana exchange as the graph reads it where the spec shows a path: token-to-token quotes,
 * and the swap of SOL into a token (`swap-token-to-sol`, as the spec titles it). Bound once at
 * start-up: to this gateway's own SolanaExchange (service mode) or to the upstream REST v1
 * deployment (facade mode, facade/upstream-swap-quotes.ts).
 */
export interface SwapQuotesDomain {
  quote(caller: Caller, input: QuoteInput): Promise<SwapQuoteView>;
  /** Swaps; the caller's Idempotency-Key goes with it. */
  swap(caller: Caller, input: SwapRequest, idempotencyKey: string | undefined): Promise<SwapSubmitted>;
}

/** Quotes as this gateway makes them (stored for a short time, to swap by id). */
export const localSwapQuotes = (exchange: SolanaExchange): SwapQuotesDomain => ({
  quote: ({ principal }, input) => exchange.quote(principal, input),
  swap: ({ principal }, input, idempotencyKey) => exchange.swap(principal, input, idempotencyKey),
});
