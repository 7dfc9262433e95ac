/**
 * Constant-product pools (x · y = k) with a 0.30 % fee taken from the input, in raw units and
 * integer arithmetic only. Rounding always favours the pool, so a quote never promises more than
 * the pool pays.
 */
export const POOL_FEE_BPS = 30n;
const BPS = 10_000n;

export interface HopAmounts {
  amountIn: bigint;
  amountOut: bigint;
  /** The part of amountIn the fee took. */
  fee: bigint;
}

export function outGivenIn(reserveIn: bigint, reserveOut: bigint, amountIn: bigint): HopAmounts {
  const afterFee = (amountIn * (BPS - POOL_FEE_BPS)) / BPS;
  const amountOut = (reserveOut * afterFee) / (reserveIn + afterFee);
  return { amountIn, amountOut, fee: amountIn - afterFee };
}

/** The least input that buys at least `amountOut`; undefined when the pool cannot pay that much. */
export function inGivenOut(reserveIn: bigint, reserveOut: bigint, amountOut: bigint): HopAmounts | undefined {
  if (amountOut <= 0n || amountOut >= reserveOut) return undefined;
  const afterFee = ceilDiv(reserveIn * amountOut, reserveOut - amountOut);
  let amountIn = ceilDiv(afterFee * BPS, BPS - POOL_FEE_BPS);
  // Integer division in outGivenIn can fall one short: step up until it pays.
  while (outGivenIn(reserveIn, reserveOut, amountIn).amountOut < amountOut) amountIn += 1n;
  const hop = outGivenIn(reserveIn, reserveOut, amountIn);
  return { amountIn, amountOut, fee: hop.fee };
}

/** Price impact of a hop as a fraction (0.01 = 1 %): how far the trade moves the pool's price. */
export function priceImpact(reserveIn: bigint, hop: HopAmounts): number {
  const afterFee = hop.amountIn - hop.fee;
  return Number(afterFee) / Number(reserveIn + afterFee);
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/**
 * Uniswap V2's getAmountOut, to the unit: the fee scales the input without rounding it first
 * (`amountIn × 997 × reserveOut / (reserveIn × 1000 + amountIn × 997)`), where outGivenIn rounds
 * the fee's part down before pricing (the Solana sandbox AMM's rule). EVM pools are Uniswap V2's.
 */
export function outGivenInV2(reserveIn: bigint, reserveOut: bigint, amountIn: bigint): HopAmounts {
  const withFee = amountIn * (BPS - POOL_FEE_BPS);
  const amountOut = (withFee * reserveOut) / (reserveIn * BPS + withFee);
  return { amountIn, amountOut, fee: (amountIn * POOL_FEE_BPS) / BPS };
}
