import { encodeFunctionData, type Hex } from 'viem';
import type { ExchangeProvider, ProviderQuote } from '../chain/exchange.js';
import { priceMovedBeyond } from '../chain/quote-store.js';
import type { SwapQuoteView, TokenInfo } from '../chain/swap-quote.js';
import type { EvmSandboxChain } from './evm-chain.js';
import { poolUsdPrices, quoteOnPools } from './evm-pools.js';
import { hexBytes } from './evm-signing.js';
import { EVM_NATIVE_ASSET, ROUTER_ABI, ROUTER_ADDRESS } from './exchange-contracts.js';
import type { EvmNetwork } from './networks.js';

/** A side of an EVM swap: a token, or the native coin as EVM_NATIVE_ASSET (which wraps nothing). */
export type EvmSwapToken = TokenInfo & { wrapsNative: boolean };
/** An EVM quote as the caller saw it (chain/swap-quote.ts). */
export type EvmSwapQuoteView = SwapQuoteView<EvmNetwork, EvmSwapToken>;

/** Gas of the router call, by hops (measured on the sandbox pools, with room), and of an approval. */
export const SWAP_GAS_BASE = 60_000n;
export const SWAP_GAS_PER_HOP = 90_000n;
export const APPROVE_GAS = 50_000n;
/** Seconds a sandbox swap takes: its approval and its swap are each mined as they arrive. */
const SANDBOX_SWAP_SECONDS = 2;

const isNative = (asset: string) => asset.toLowerCase() === EVM_NATIVE_ASSET.toLowerCase();

/**
 * The sandbox exchange as the core's exchange provider (chain/exchange.ts): quotes priced on the
 * network's Uniswap V2 pools, USD prices from them, and execution as a transaction for the wallet
 * (a Router02 call, with the minimum output enforced on chain), which the EVM exchange signs and
 * sends after the approval it needs, like any send. The core's `Commit`/`Recorded` are never: no
 * EVM venue records a swap itself.
 */
export type EvmExchangeProvider = ExchangeProvider<EvmNetwork, EvmSwapQuoteView, never, never>;

export function sandboxUniswap(chainOf: (network: EvmNetwork) => EvmSandboxChain): EvmExchangeProvider {
  const ready = async (network: EvmNetwork) => {
    const chain = chainOf(network);
    await chain.ensureExchange();
    return chain;
  };
  return {
    name: 'sandbox-uniswap-v2',
    estimatedSwapSeconds: SANDBOX_SWAP_SECONDS,
    async quote(network, request) {
      return quoteOnPools(await ready(network), network, request);
    },
    async usdPrices(network, assets) {
      const prices = await poolUsdPrices(await ready(network), network);
      return new Map(assets.flatMap((a) => (prices.has(a.toLowerCase()) ? [[a, prices.get(a.toLowerCase())!]] : [])));
    },
    // Uniswap V2 keeps 0.30 % of each hop's input.
    feeFraction: (quote) => 1 - 0.997 ** quote.hops.length,
    // An EVM transaction carries one signature: the wallet's.
    signatures: () => 1,
    async execute(order) {
      const quote = await quoteOnPools(await ready(order.network), order.network, order.request);
      if (quote.outAmountRaw < order.threshold) throw priceMovedBeyond(order.view.slippageTolerance);
      await order.takeQuote();
      return {
        send: {
          unsigned: hexBytes(routerCall(order.walletAddress as Hex, quote, order.threshold)),
          validThroughHeight: 0n,
          inAmountRaw: quote.inAmountRaw,
          outAmountRaw: quote.outAmountRaw,
        },
      };
    },
  };
}

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

export { ROUTER_ADDRESS, isNative };
