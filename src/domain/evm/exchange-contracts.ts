import { encodePacked, getContractAddress, type Hex, keccak256, parseAbi } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';
import { genesisContracts } from './sandbox-contracts.js';

/**
 * The sandbox exchange's contracts as callers see them: Uniswap V2's factory and Router02 (the
 * published bytecode of @uniswap/v2-core 1.0.1 and @uniswap/v2-periphery 1.1.0-beta.0, deployed by
 * sandbox-exchange.ts), their pairs, and the pools they are seeded with. Everything here is known
 * without the VM: addresses follow from the market maker's nonces and CREATE2, so this module is
 * light enough for the process's start (the bytecode is imported only with the sandbox chain).
 */

export const ROUTER_ABI = parseAbi([
  'function getAmountsOut(uint amountIn, address[] path) view returns (uint[] amounts)',
  'function swapExactETHForTokens(uint amountOutMin, address[] path, address to, uint deadline) payable returns (uint[] amounts)',
  'function swapExactTokensForTokens(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline) returns (uint[] amounts)',
  'function swapExactTokensForETH(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline) returns (uint[] amounts)',
  'function addLiquidity(address tokenA, address tokenB, uint amountADesired, uint amountBDesired, uint amountAMin, uint amountBMin, address to, uint deadline) returns (uint amountA, uint amountB, uint liquidity)',
]);
export const PAIR_ABI = parseAbi([
  'function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)',
  'event Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)',
]);
export const ALLOWANCE_ABI = parseAbi([
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Withdrawal(address indexed src, uint256 wad)',
]);

/** keccak256 of v2-core's UniswapV2Pair creation code: the hash Router02's pairFor is compiled with. */
export const PAIR_INIT_CODE_HASH: Hex = '0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f';

/**
 * The market maker's key, the same on every network: it deploys the factory (nonce 0) and the
 * router (nonce 1), then adds each pool's liquidity, so it owns every pool's liquidity tokens. A
 * sandbox key, public by design: it guards nothing of value.
 */
export const MARKET_MAKER_KEY: Hex = '0x3b1d6c0e8a7f2e5d9c4b1a0f6e3d8c7b2a5f4e1d0c9b8a7f6e5d4c3b2a1f0e9d';
export const MARKET_MAKER_ADDRESS = privateKeyToAddress(MARKET_MAKER_KEY);
export const FACTORY_ADDRESS = getContractAddress({ from: MARKET_MAKER_ADDRESS, nonce: 0n });
export const ROUTER_ADDRESS = getContractAddress({ from: MARKET_MAKER_ADDRESS, nonce: 1n });

/** How the core names a network's native coin as a swap's side (the convention wallets and aggregators use). */
export const EVM_NATIVE_ASSET = '0xEeeeeEeeeEeEeEeEeEeeEEEeeeeEeeeeeeeEEeE';

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

/** The pair contract of two tokens, as the factory creates it (CREATE2) and Router02 computes it. */
export function pairAddress(tokenA: string, tokenB: string): Hex {
  const [t0, t1] = sortTokens(tokenA, tokenB);
  return getContractAddress({
    opcode: 'CREATE2',
    from: FACTORY_ADDRESS,
    salt: keccak256(encodePacked(['address', 'address'], [t0, t1])),
    bytecodeHash: PAIR_INIT_CODE_HASH,
  });
}

/** Uniswap's order of a pair's tokens: token0 is the lower address. */
export function sortTokens(a: string, b: string): [Hex, Hex] {
  const [x, y] = [a.toLowerCase() as Hex, b.toLowerCase() as Hex];
  return x < y ? [x, y] : [y, x];
}
