import { badInput } from '../errors.js';

/**
 * Quotes and swaps in the core's terms: assets by their address on the chain (a Solana mint, an
 * ERC-20 contract), amounts in raw units, transactions as bytes. A family's providers (the sandbox
 * AMM and Jupiter for Solana) implement ExchangeProvider; how a swap executes differs between them
 * and is said here, so a family's exchange service treats every provider alike.
 */

export type SwapMode = 'ExactIn' | 'ExactOut';

export interface QuoteRequest {
  /** The input asset's address on the chain (a Solana mint, an ERC-20 contract; the family's key for its native coin). */
  inputAsset: string;
  outputAsset: string;
  /** Raw units of the input token (ExactIn) or of the output token (ExactOut). */
  amountRaw: bigint;
  swapMode: SwapMode;
  slippageBps: number;
}

export interface RouteHop {
  dex: string;
  inputAsset: string;
  outputAsset: string;
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

/** A swap a venue executed and recorded itself, with the chain's new state, in one commit. */
export interface ExecutedSwap {
  inRaw: bigint;
  outRaw: bigint;
  /** The transaction's hash (a Solana signature). */
  hash: string;
  /** The signed transaction, base64. */
  wire: string;
}

/**
 * A stored quote being executed for a custodial wallet. `Commit` is the handle of the commit a
 * venue records an executed swap in (the family chooses it: Solana's is its database transaction);
 * `View` is the quote as the caller saw it (named in a PRICE_MOVED refusal).
 */
export interface SwapOrder<Network extends string, View, Commit, Recorded> {
  network: Network;
  request: QuoteRequest;
  /** ExactIn: the least output accepted; ExactOut: the most input (the quote's slippage applied). */
  threshold: bigint;
  view: View;
  walletAddress: string;
  /** A signature by the wallet's key. */
  sign(message: Uint8Array): Promise<Uint8Array>;
  /** Marks the quote executed, once (CONFLICT for a second time), before a transaction is built to be sent. */
  takeQuote(): Promise<void>;
  /** Records a swap the venue executed (taking the quote), in the commit that stores the chain's new state. */
  record(commit: Commit, swap: ExecutedSwap): Promise<Recorded>;
}

export type SwapExecution<Recorded> =
  /** Executed on the venue's own chain and recorded with it (`SwapOrder.record`). */
  | { recorded: Recorded }
  /** An unsigned transaction for the wallet: checked, signed, stored and sent like any chain send. */
  | {
      send: {
        /** The unsigned transaction, serialized as the chain's wire format. */
        unsigned: Uint8Array;
        /** The height after which it can no longer land (Solana's lastValidBlockHeight). */
        validThroughHeight: bigint;
        inAmountRaw: bigint;
        outAmountRaw: bigint;
      };
    };

/** Quotes, prices and swaps from the routing provider of one family and environment. */
export interface ExchangeProvider<Network extends string, View, Commit, Recorded> {
  readonly name: string;
  quote(network: Network, request: QuoteRequest): Promise<ProviderQuote>;
  /** USD prices of the assets it knows; the others are left out. */
  usdPrices(network: Network, assets: string[]): Promise<Map<string, number>>;
  /** The fraction of the input the route's pools keep as fees (0 where the price already includes them). */
  feeFraction(quote: ProviderQuote): number;
  /** Signatures the swap's transaction carries (the wallet's and any pool's), for the network fee. */
  signatures(quote: ProviderQuote): number;
  /** Seconds a swap usually takes to settle. */
  readonly estimatedSwapSeconds: number;
  /** Executes the order, refusing with PRICE_MOVED when the price moved beyond its threshold. */
  execute(order: SwapOrder<Network, View, Commit, Recorded>): Promise<SwapExecution<Recorded>>;
}

/** Applies slippage to a quote's other side (Jupiter's otherAmountThreshold). */
export function thresholdOf(mode: SwapMode, inAmountRaw: bigint, outAmountRaw: bigint, slippageBps: number): bigint {
  const bps = BigInt(slippageBps);
  return mode === 'ExactIn'
    ? (outAmountRaw * (10_000n - bps)) / 10_000n
    : (inAmountRaw * (10_000n + bps) + 9_999n) / 10_000n;
}

const DEFAULT_SLIPPAGE_BPS = 50;

/** A quote's slippage in basis points: 50 (0.5 %) when not given, at most 5,000 (50 %). */
export function checkSlippage(value: number | null | undefined): number {
  if (value === undefined || value === null) return DEFAULT_SLIPPAGE_BPS;
  if (!Number.isInteger(value) || value < 0 || value > 5_000)
    throw badInput('slippageBps', 'slippageBps must be a whole number from 0 to 5000 (50 %).');
  return value;
}
