import { encodeFunctionData, type Hex } from 'viem';
import type { ExchangeProvider, ProviderQuote } from '../chain/exchange.js';
import type { SwapQuoteView, TokenInfo } from '../chain/swap-quote.js';
import { EVM_NATIVE_ASSET, ROUTER_ABI } from './exchange-contracts.js';
import type { EvmNetwork } from './networks.js';

/** A side of an EVM swap: a token, or the native coin as EVM_NATIVE_ASSET (which wraps nothing). */
export type EvmSwapToken = TokenInfo & { wrapsNative: boolean };
/** An EVM quote as the caller saw it (chain/swap-quote.ts). */
export type EvmSwapQuoteView = SwapQuoteView<EvmNetwork, EvmSwapToken>;

/** Gas of the router call, by hops (measured on the sandbox pools, with room), and of an approval. */
export const SWAP_GAS_BASE = 60_000n;
export const SWAP_GAS_PER_HOP = 90_000n;
export const APPROVE_GAS = 50_000n;

export const isNative = (asset: string) => asset.toLowerCase() === EVM_NATIVE_ASSET.toLowerCase();

/**
 * An EVM exchange as the core's exchange provider (chain/exchange.ts): quotes, USD prices, and
 * execution as a transaction for the wallet (a Router02 call, with the minimum output enforced on
 * chain), which the EVM exchange signs and sends after the approval it needs, like any send. The
 * core's `Commit`/`Recorded` are never: no EVM venue records a swap itself. The sandbox's is
 * sandbox-uniswap.ts.
 */
export type EvmExchangeProvider = ExchangeProvider<EvmNetwork, EvmSwapQuoteView, never, never> & {
  /** The Router02 a network's swaps go through: the spender approvals name, and the swap's `to`. */
  router(network: EvmNetwork): Hex;
};

/** How long a signed swap may wait to be mined before the router refuses it (its `deadline`). */
const DEADLINE_SECONDS = 300n;

/**
 * The Router02 call of a priced ExactIn route: native in (`swapExactETHForTokens`, the amount as
 * the call's value), native out (`swapExactTokensForETH`), or token to token, each with
 * `amountOutMin` the quote's threshold, so the pools can never pay less than the caller accepted.
 */
export function routerCall(wallet: Hex, quote: ProviderQuote, amountOutMin: bigint): Hex {
  const path = (quote.raw as { path: Hex[] }).path;
  const deadline = BigInt(Math.floor(Date.now() / 1000)) + DEADLINE_SECONDS;
  const first = quote.hops[0]!.inputAsset;
  const last = quote.hops[quote.hops.length - 1]!.outputAsset;
  if (isNative(first))
    return encodeFunctionData({
      abi: ROUTER_ABI,
      functionName: 'swapExactETHForTokens',
      args: [amountOutMin, path, wallet, deadline],
    });
  return encodeFunctionData({
    abi: ROUTER_ABI,
    functionName: isNative(last) ? 'swapExactTokensForETH' : 'swapExactTokensForTokens',
    args: [quote.inAmountRaw, amountOutMin, path, wallet, deadline],
  });
}
