import { getContractAddress, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { pairAddressOf } from './exchange-contracts.js';
import { EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';
import { genesisContracts } from './sandbox-contracts.js';

/**
 * The sandbox exchange's deployment as callers see it: Uniswap V2's factory and Router02 (the
 * published bytecode of @uniswap/v2-core 1.0.1 and @uniswap/v2-periphery 1.1.0-beta.0, deployed by
 * sandbox-exchange.ts), their pairs, and the pools they are seeded with. Everything here is known
 * without the VM: addresses follow from the market maker's nonces and CREATE2, so this module is
 * light enough for the process's start (the bytecode is imported only with the sandbox chain).
 */

/**
 * The market maker's key, the same on every network: it deploys the factory (nonce 0) and the
 * router (nonce 1), then adds each pool's liquidity, so it owns every pool's liquidity tokens. A
 * sandbox key, public by design: it guards nothing of value.
 */
export const MARKET_MAKER_KEY: Hex = '0x3b1d6c0e8a7f2e5d9c4b1a0f6e3d8c7b2a5f4e1d0c9b8a7f6e5d4c3b2a1f0e9d';
export const MARKET_MAKER_ADDRESS = privateKeyToAddress(MARKET_MAKER_KEY);
export const FACTORY_ADDRESS = getContractAddress({ from: MARKET_MAKER_ADDRESS, nonce: 0n });
export const ROUTER_ADDRESS = getContractAddress({ from: MARKET_MAKER_ADDRESS, nonce: 1n });

/** USD a whole unit of each native coin is seeded at (the pools then set the price). */
const NATIVE_USD = { ETH: 3_000, POL: 0.25, BNB: 600 } as const;
/** USD per NGN the cNGN pools are seeded at: the sandbox offramp's market rate, ₦1,650 per dollar. */
export const SEED_NGN_PER_USD = 1_650;
/** Each pool's depth on either side, in USD: large enough that a few thousand dollars moves the price little. */
const POOL_DEPTH_USD = 3_000_000;

export interface SeededPool {
  a: EvmTokenSpec;
  b: EvmTokenSpec;
  /** Raw units the market maker adds of `a` and of `b`. */
  reserveA: bigint;
  reserveB: bigint;
}

const unitsOf = (token: EvmTokenSpec, whole: number) =>
  (BigInt(Math.round(whole * 1e6)) * 10n ** BigInt(token.decimals)) / 1_000_000n;
const usdOf = (network: EvmNetwork, token: EvmTokenSpec): number =>
  token.wrapsNative
    ? NATIVE_USD[EVM_NETWORK_SPECS[network].native.symbol]
    : token.symbol === 'CNGN'
      ? 1 / SEED_NGN_PER_USD
      : 1;

/**
 * A network's seeded pools: every token against the wrapped native coin, and USDT/USDC directly
 * (the pair stablecoin swaps take most). A token pair without a pool routes through the wrapped coin.
 */
export function seededPools(network: EvmNetwork): SeededPool[] {
  const tokens = EVM_NETWORK_SPECS[network].tokens;
  const wrapped = tokens.find((t) => t.wrapsNative)!;
  const pool = (a: EvmTokenSpec, b: EvmTokenSpec): SeededPool => ({
    a,
    b,
    reserveA: unitsOf(a, POOL_DEPTH_USD / usdOf(network, a)),
    reserveB: unitsOf(b, POOL_DEPTH_USD / usdOf(network, b)),
  });
  const pools = tokens.filter((t) => !t.wrapsNative).map((t) => pool(t, wrapped));
  const usdt = tokens.find((t) => t.symbol === 'USDT');
  const usdc = tokens.find((t) => t.symbol === 'USDC');
  if (usdt && usdc) pools.push(pool(usdt, usdc));
  return pools;
}

/** The sandbox contract of a network's token. */
export function sandboxTokenAddress(network: EvmNetwork, token: EvmTokenSpec): Hex {
  return genesisContracts(network).find((c) => c.token.symbol === token.symbol)!.address;
}

/** The wrapped native coin's token spec on a network (WETH, WPOL, WBNB). */
export const wrappedNative = (network: EvmNetwork): EvmTokenSpec =>
  EVM_NETWORK_SPECS[network].tokens.find((t) => t.wrapsNative)!;

/** A sandbox pair's contract. */
export const pairAddress = (tokenA: string, tokenB: string): Hex => pairAddressOf(FACTORY_ADDRESS, tokenA, tokenB);
