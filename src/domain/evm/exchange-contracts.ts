import { encodePacked, getContractAddress, type Hex, keccak256, parseAbi } from 'viem';

/**
 * Uniswap V2 as callers see it, on any EVM network: Router02's, a pair's and an ERC-20's ABI
 * fragments, and a pair's address from its factory (CREATE2 with the pair's init-code hash). The
 * sandbox's own deployment and pools are in sandbox-pools.ts.
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

/** How the core names a network's native coin as a swap's side (the convention wallets and aggregators use). */
export const EVM_NATIVE_ASSET = '0xEeeeeEeeeEeEeEeEeEeeEEEeeeeEeeeeeeeEEeE';

/** keccak256 of v2-core's UniswapV2Pair creation code: the hash Router02's pairFor is compiled with. */
export const PAIR_INIT_CODE_HASH: Hex = '0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f';

/** The pair contract of two tokens, as `factory` creates it (CREATE2) and Router02 computes it. */
export function pairAddressOf(factory: Hex, tokenA: string, tokenB: string): Hex {
  const [t0, t1] = sortTokens(tokenA, tokenB);
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt: keccak256(encodePacked(['address', 'address'], [t0, t1])),
    bytecodeHash: PAIR_INIT_CODE_HASH,
  });
}

/** Uniswap's order of a pair's tokens: token0 is the lower address. */
export function sortTokens(a: string, b: string): [Hex, Hex] {
  const [x, y] = [a.toLowerCase() as Hex, b.toLowerCase() as Hex];
  return x < y ? [x, y] : [y, x];
}
