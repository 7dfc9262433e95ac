import type { Hex } from 'viem';
import { priceMovedBeyond } from '../chain/quote-store.js';
import type { EvmSandboxChain } from './evm-chain.js';
import { type EvmExchangeProvider, routerCall } from './evm-exchange-provider.js';
import { hexBytes } from './evm-signing.js';
import type { EvmNetwork } from './networks.js';
import { poolUsdPrices, quoteOnPools } from './sandbox-pool-quotes.js';
import { ROUTER_ADDRESS } from './sandbox-pools.js';

/** Seconds a sandbox swap takes: its approval and its swap are each mined as they arrive. */
const SANDBOX_SWAP_SECONDS = 2;

/**
 * The sandbox exchange: quotes priced on the network's Uniswap V2 pools (deployed on first use),
 * USD prices from them, and execution as a Router02 call for the wallet.
 */
export function sandboxUniswap(chainOf: (network: EvmNetwork) => EvmSandboxChain): EvmExchangeProvider {
  const ready = async (network: EvmNetwork) => {
    const chain = chainOf(network);
    await chain.ensureExchange();
    return chain;
  };
  return {
    name: 'sandbox-uniswap-v2',
    router: () => ROUTER_ADDRESS,
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
