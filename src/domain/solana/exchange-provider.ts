import type { VersionedTransaction } from '@solana/web3.js';
import type { Tx } from '../../db/client.js';
import type { SolanaNetwork } from './networks.js';
import type { SwapQuoteView } from './swap-quote.js';
import type { SolanaTransferRow } from './transfer-store.js';

export type SwapMode = 'ExactIn' | 'ExactOut';

export interface QuoteRequest {
  inputMint: string;
  outputMint: string;
  /** Raw units of the input token (ExactIn) or of the output token (ExactOut). */
  amountRaw: bigint;
  swapMode: SwapMode;
  slippageBps: number;
}

export interface RouteHop {
  dex: string;
  inputMint: string;
  outputMint: string;
  inAmountRaw: bigint;
  outAmountRaw: bigint;
  /** Fee taken by the hop, in its input token. */
  feeRaw: bigint;
}

/** A provider's quote, in raw units; `raw` is what the provider answered, kept verbatim. */
export interface ProviderQuote {
  inAmountRaw: bigint;
  outAmountRaw: bigint;
  /** ExactIn: the least output after slippage. ExactOut: the most input after slippage. */
  otherAmountThresholdRaw: bigint;
  /** A fraction: 0.01 is 1 %. */
  priceImpact: number;
  hops: RouteHop[];
  raw: Record<string, unknown>;
}

/** A stored quote being executed for a custodial wallet. */
export interface SwapOrder {
  network: SolanaNetwork;
  request: QuoteRequest;
  /** ExactIn: the least output accepted; ExactOut: the most input (the quote's slippage applied). */
  threshold: bigint;
  view: SwapQuoteView;
  walletAddress: string;
  /** An ed25519 signature by the wallet's key. */
  sign(message: Uint8Array): Promise<Uint8Array>;
  /** Marks the quote executed, once (CONFLICT for a second time), before a transaction is built to be sent. */
  takeQuote(): Promise<void>;
  /** Records a swap the venue executed (taking the quote), in the transaction that stores the chain's new state. */
  record(tx: Tx, swap: ExecutedSwap): Promise<SolanaTransferRow>;
}

/** A swap a venue executed and recorded itself, with the chain's new state, in one commit. */
export interface ExecutedSwap {
  inRaw: bigint;
  outRaw: bigint;
  signature: string;
  /** The signed transaction, base64. */
  wire: string;
}

export type SwapExecution =
  /** Executed on the venue's own chain and recorded with it (`SwapOrder.record`). */
  | { recorded: SolanaTransferRow }
  /** A transaction for the wallet: checked, signed, stored and sent like any chain send. */
  | {
      send: {
        transaction: VersionedTransaction;
        lastValidBlockHeight: bigint;
        inAmountRaw: bigint;
        outAmountRaw: bigint;
      };
    };

/**
 * Quotes, prices and swaps from the routing provider of an environment: the sandbox AMM or
 * Jupiter. What differs between them (fees, signatures, how a swap executes) is said here, so the
 * exchange service treats every provider alike.
 */
export interface ExchangeProvider {
  readonly name: string;
  quote(network: SolanaNetwork, request: QuoteRequest): Promise<ProviderQuote>;
  /** USD prices of the mints it knows; the others are left out. */
  usdPrices(network: SolanaNetwork, mints: string[]): Promise<Map<string, number>>;
  /** The fraction of the input the route's pools keep as fees (0 where the price already includes them). */
  feeFraction(quote: ProviderQuote): number;
  /** Signatures the swap's transaction carries (the wallet's and any pool's), for the network fee. */
  signatures(quote: ProviderQuote): number;
  /** Seconds a swap usually takes to settle. */
  readonly estimatedSwapSeconds: number;
  /** Executes the order, refusing with PRICE_MOVED when the price moved beyond its threshold. */
  execute(order: SwapOrder): Promise<SwapExecution>;
}

/** Applies slippage to a quote's other side (Jupiter's otherAmountThreshold). */
export function thresholdOf(mode: SwapMode, inAmountRaw: bigint, outAmountRaw: bigint, slippageBps: number): bigint {
  const bps = BigInt(slippageBps);
  return mode === 'ExactIn'
    ? (outAmountRaw * (10_000n - bps)) / 10_000n
    : (inAmountRaw * (10_000n + bps) + 9_999n) / 10_000n;
}
