import { getAddress } from 'viem';
import type { MarketMakers } from '../reconciliation/balances.js';
import type { EvmChain } from './evm-chain.js';
import { EVM_NATIVE_ASSET } from './exchange-contracts.js';
import { MARKET_MAKER_ADDRESS, pairAddress, sandboxTokenAddress, seededPools } from './sandbox-pools.js';
import type { EvmNetwork } from './networks.js';

/**
 * The sandbox exchange's pools on one EVM network as market makers for reconciliation: what the
 * market maker seeded them with, and what the pair contracts hold now (the reserves its liquidity
 * tokens own). The wrapped native coin is counted as the native coin, as swaps name it (a swap row's
 * null asset, or EVM_NATIVE_ASSET as output). Read without creating a network nobody used: there,
 * as on a network whose exchange is not deployed yet, both sides are empty.
 */
export function evmSandboxMarketMakers(network: EvmNetwork, chain: () => EvmChain): MarketMakers {
  const pools = seededPools(network).map((pool) => {
    const a = getAddress(sandboxTokenAddress(network, pool.a));
    const b = getAddress(sandboxTokenAddress(network, pool.b));
    return {
      pair: pairAddress(a, b),
      sides: [
        [pool.a.wrapsNative ? EVM_NATIVE_ASSET : a, a, pool.reserveA],
        [pool.b.wrapsNative ? EVM_NATIVE_ASSET : b, b, pool.reserveB],
      ] as const,
    };
  });
  const genesis = new Map<string, bigint>();
  for (const { sides } of pools)
    for (const [asset, , reserve] of sides) genesis.set(asset, (genesis.get(asset) ?? 0n) + reserve);
  return {
    family: 'evm',
    network,
    native: { asset: EVM_NATIVE_ASSET, currency: 'native' },
    genesis,
    // The market maker holds liquidity tokens once its pools are seeded (the deployment's last steps).
    deployed: async () => (await chain().tokenBalance(MARKET_MAKER_ADDRESS, pools.at(-1)!.pair)) > 0n,
    async held() {
      const held = new Map<string, bigint>();
      for (const { pair, sides } of pools)
        for (const [asset, contract] of sides)
          held.set(asset, (held.get(asset) ?? 0n) + (await chain().tokenBalance(pair, contract)));
      return held;
    },
  };
}
