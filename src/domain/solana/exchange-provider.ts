import type { SolanaNetwork } from './networks.js';

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

/** Quotes and prices from the routing provider of an environment: the sandbox AMM or Jupiter. */
export interface ExchangeProvider {
  readonly name: string;
  quote(network: SolanaNetwork, request: QuoteRequest): Promise<ProviderQuote>;
  /** USD prices of the mints it knows; the others are left out. */
  usdPrices(network: SolanaNetwork, mints: string[]): Promise<Map<string, number>>;
}

/** Applies slippage to a quote's other side (Jupiter's otherAmountThreshold). */
export function thresholdOf(mode: SwapMode, inAmountRaw: bigint, outAmountRaw: bigint, slippageBps: number): bigint {
  const bps = BigInt(slippageBps);
  return mode === 'ExactIn'
    ? (outAmountRaw * (10_000n - bps)) / 10_000n
    : (inAmountRaw * (10_000n + bps) + 9_999n) / 10_000n;
}
