import type { Tx } from '../../db/client.js';
import type * as Core from '../chain/exchange.js';
import type { SolanaNetwork } from './networks.js';
import type { SwapQuoteView } from './swap-quote.js';
import type { SolanaTransferRow } from './transfer-store.js';

export type { ExecutedSwap, ProviderQuote, QuoteRequest, RouteHop, SwapMode } from '../chain/exchange.js';
export { thresholdOf } from '../chain/exchange.js';

/**
 * The core's exchange provider (chain/exchange.ts) on Solana: networks are clusters, the quote is
 * the seed's view, and a venue that executes on its own chain (the sandbox AMM) records the swap in
 * the database transaction that stores the chain's new state.
 */
export type ExchangeProvider = Core.ExchangeProvider<SolanaNetwork, SwapQuoteView, Tx, SolanaTransferRow>;
export type SwapOrder = Core.SwapOrder<SolanaNetwork, SwapQuoteView, Tx, SolanaTransferRow>;
export type SwapExecution = Core.SwapExecution<SolanaTransferRow>;
