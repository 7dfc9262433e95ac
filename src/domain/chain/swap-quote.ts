import { formatUnits } from '../money/decimal.js';
import type { ProviderQuote, QuoteRequest, SwapMode } from './exchange.js';

/**
 * The seed's swap quote in the core's terms, built once for every family: a family supplies its
 * provider's quote, the tokens, USD prices and its network fee; the view's fields, fees, warnings
 * and score are worked out here alike for Solana and the EVM.
 */

export const QUOTE_TTL_SECONDS = 30;

/** A token as a quote names it: by its address on the chain (a Solana mint, an ERC-20 contract). */
export interface TokenInfo {
  address: string;
  symbol: string;
  name: string;
  decimals: number;
  logoUri?: string;
}

const decimalFromRaw = (raw: bigint, decimals: number) => formatUnits(raw, decimals);

/** The seed's swap quote, every field. */
export interface SwapQuoteView<Network extends string = string, Token extends TokenInfo = TokenInfo> {
  quoteId: string;
  swapMode: SwapMode;
  fromToken: Token;
  toToken: Token;
  amounts: {
    inputAmount: string;
    outputAmount: string;
    minOutputAmount: string;
    inputAmountRaw: string;
    outputAmountRaw: string;
  };
  rates: { rate: string; reverseRate: string; usdRate: string };
  fees: {
    protocolFeePercent: string;
    protocolFeeAmount: string;
    platformFeePercent: string;
    totalFeePercent: string;
    totalFeeAmount: string;
    gasFee: string;
    totalCost: string;
  };
  route: { hops: number; dexes: string[]; tokens: string[]; efficiencyScore: number };
  priceImpact: string;
  usdValues: { inputValue: number; outputValue: number; netValue: number };
  slippageTolerance: string;
  expiryTimestamp: number;
  expiresIn: number;
  estimatedSwapTime: number;
  network: Network;
  executable: boolean;
  warnings: string[];
  /** The routing provider's quote as it came; the spec makes it optional (an upstream may leave it out). */
  rawQuote?: Record<string, unknown>;
}

const significant = (value: number) => (Number.isFinite(value) ? Number(value.toPrecision(12)).toString() : '0');
const cents = (value: number) => Math.round(value * 100) / 100;

export interface QuoteFacts<Network extends string, Token extends TokenInfo = TokenInfo> {
  quoteId: string;
  network: Network;
  request: QuoteRequest;
  from: Token;
  to: Token;
  quote: ProviderQuote;
  prices: Map<string, number>;
  /** The fraction of the input the route's pools keep (the provider's feeFraction). */
  feeFraction: number;
  /** The network fee, in whole units of the chain's native coin, and that coin's USD price when known. */
  gas: { amount: number; usd: number | undefined };
  estimatedSwapSeconds: number;
  symbols: (asset: string) => string;
  /** What the wallet holds of the input token (raw), to say whether the swap can run. */
  inputBalanceRaw: bigint;
  now: Date;
}

/** Maps a provider's quote onto the seed's shape, with fees, USD values, score and warnings. */
export function quoteView<Network extends string, Token extends TokenInfo>(
  f: QuoteFacts<Network, Token>,
): SwapQuoteView<Network, Token> {
  const { quote, from, to } = f;
  const inHuman = Number(quote.inAmountRaw) / 10 ** from.decimals;
  const outHuman = Number(quote.outAmountRaw) / 10 ** to.decimals;
  const feeFraction = f.feeFraction;
  const feePercent = significant(feeFraction * 100);
  const feeInInput = inHuman * feeFraction;
  const gasNative = f.gas.amount;
  const inUsd = f.prices.get(from.address);
  const outUsd = f.prices.get(to.address);
  const warnings: string[] = [];
  if (f.quote.priceImpact > 0.05) warnings.push(`High price impact: ${significant(f.quote.priceImpact * 100)} %.`);
  if (f.inputBalanceRaw < quote.inAmountRaw)
    warnings.push(
      `Insufficient ${from.symbol} balance: the wallet holds ${decimalFromRaw(f.inputBalanceRaw, from.decimals)}.`,
    );
  if (inUsd === undefined || outUsd === undefined)
    warnings.push('No USD price for one of the tokens: USD values are 0.');
  const inputValue = cents(inHuman * (inUsd ?? 0));
  const outputValue = cents(outHuman * (outUsd ?? 0));
  const efficiencyScore = Math.max(
    1,
    Math.min(100, Math.round(100 - f.quote.priceImpact * 1000 - (quote.hops.length - 1) * 5)),
  );
  const expiry = Math.floor(f.now.getTime() / 1000) + QUOTE_TTL_SECONDS;
  return {
    quoteId: f.quoteId,
    swapMode: f.request.swapMode,
    fromToken: from,
    toToken: to,
    amounts: {
      inputAmount: decimalFromRaw(quote.inAmountRaw, from.decimals),
      outputAmount: decimalFromRaw(quote.outAmountRaw, to.decimals),
      minOutputAmount: decimalFromRaw(
        f.request.swapMode === 'ExactIn' ? quote.otherAmountThresholdRaw : quote.outAmountRaw,
        to.decimals,
      ),
      inputAmountRaw: quote.inAmountRaw.toString(),
      outputAmountRaw: quote.outAmountRaw.toString(),
    },
    rates: {
      rate: significant(outHuman / inHuman),
      reverseRate: significant(inHuman / outHuman),
      usdRate: significant(inUsd ?? 0),
    },
    fees: {
      protocolFeePercent: feePercent,
      protocolFeeAmount: significant(feeInInput),
      platformFeePercent: '0',
      totalFeePercent: feePercent,
      totalFeeAmount: significant(feeInInput),
      gasFee: significant(gasNative),
      // In USD: the fee's value plus the gas's, where prices are known.
      totalCost: significant(cents(feeInInput * (inUsd ?? 0) + gasNative * (f.gas.usd ?? 0))),
    },
    route: {
      hops: quote.hops.length,
      dexes: quote.hops.map((h) => h.dex),
      tokens: [quote.hops[0]!.inputAsset, ...quote.hops.map((h) => h.outputAsset)].map(f.symbols),
      efficiencyScore,
    },
    priceImpact: significant(f.quote.priceImpact * 100),
    usdValues: { inputValue, outputValue, netValue: cents(outputValue - inputValue) },
    slippageTolerance: significant(f.request.slippageBps / 100),
    expiryTimestamp: expiry,
    expiresIn: QUOTE_TTL_SECONDS,
    estimatedSwapTime: f.estimatedSwapSeconds,
    network: f.network,
    executable: f.inputBalanceRaw >= quote.inAmountRaw,
    warnings,
    rawQuote: quote.raw,
  };
}
