import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { outGivenInV2, priceImpact } from '../chain/pool-math.js';
import type { ProviderQuote, QuoteRequest, RouteHop } from '../chain/exchange.js';
import { thresholdOf } from '../chain/exchange.js';
import { badInput, DomainError } from '../errors.js';
import type { EvmChain } from './evm-chain.js';
import { hexBytes } from './evm-signing.js';
import { EVM_NATIVE_ASSET, PAIR_ABI, sortTokens } from './exchange-contracts.js';
import { pairAddress, ROUTER_ADDRESS, sandboxTokenAddress, seededPools, wrappedNative } from './sandbox-pools.js';
import { EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';

/** The DEX every sandbox hop goes through, as a quote's route names it. */
export const SANDBOX_DEX = 'Uniswap V2 (sandbox)';

const lower = (address: string) => address.toLowerCase();

/** Whether the network has a seeded pool of the two tokens (contracts, any case). */
function hasPool(network: EvmNetwork, a: string, b: string): boolean {
  const [x, y] = sortTokens(a, b);
  return seededPools(network).some((pool) => {
    const [p, q] = sortTokens(sandboxTokenAddress(network, pool.a), sandboxTokenAddress(network, pool.b));
    return p === x && q === y;
  });
}

/**
 * The router path of a swap between two assets (the native coin as its wrapped token): the pair's
 * own pool where there is one, else through the wrapped native coin (every token has a pool with it).
 */
export function routePath(network: EvmNetwork, inputAsset: string, outputAsset: string): Hex[] {
  const wrapped = lower(sandboxTokenAddress(network, wrappedNative(network)));
  const asToken = (asset: string) => (lower(asset) === lower(EVM_NATIVE_ASSET) ? wrapped : lower(asset));
  const [a, b] = [asToken(inputAsset), asToken(outputAsset)];
  if (a === b) throw badInput('outputToken', 'outputToken must differ from the input (wrapping is not a swap).');
  return (hasPool(network, a, b) ? [a, b] : [a, wrapped, b]) as Hex[];
}

/** A pool's reserves as [reserve of `tokenIn`, reserve of the other]. */
export async function reservesOf(chain: EvmChain, tokenIn: string, tokenOut: string): Promise<[bigint, bigint]> {
  const data = await chain.call({
    to: pairAddress(tokenIn, tokenOut),
    data: hexBytes(encodeFunctionData({ abi: PAIR_ABI, functionName: 'getReserves' })),
  });
  if (data.length < 64)
    throw new DomainError('SERVICE_UNAVAILABLE', `The sandbox exchange has no pool on ${chain.network} for that pair.`);
  const [r0, r1] = decodeFunctionResult({
    abi: PAIR_ABI,
    functionName: 'getReserves',
    data: `0x${Buffer.from(data).toString('hex')}`,
  });
  const [t0] = sortTokens(tokenIn, tokenOut);
  return t0 === lower(tokenIn) ? [r0, r1] : [r1, r0];
}

/**
 * An ExactIn quote priced against the pools as they are now, hop by hop with Uniswap V2's own
 * formula (pool-math.ts outGivenInV2): the amounts Router02's getAmountsOut answers, to the unit.
 */
export async function quoteOnPools(
  chain: EvmChain,
  network: EvmNetwork,
  request: QuoteRequest,
): Promise<ProviderQuote> {
  if (request.swapMode !== 'ExactIn')
    throw badInput('swapMode', 'EVM swaps fix the input amount: swapMode must be ExactIn.');
  const path = routePath(network, request.inputAsset, request.outputAsset);
  const hops: RouteHop[] = [];
  const reserves: Array<[string, string]> = [];
  let amount = request.amountRaw;
  let kept = 1;
  for (let i = 0; i + 1 < path.length; i++) {
    const [reserveIn, reserveOut] = await reservesOf(chain, path[i]!, path[i + 1]!);
    const hop = outGivenInV2(reserveIn, reserveOut, amount);
    if (hop.amountOut <= 0n) throw badInput('amount', 'amount is too small: the pools would pay nothing for it.');
    kept *= 1 - priceImpact(reserveIn, hop);
    reserves.push([reserveIn.toString(), reserveOut.toString()]);
    hops.push({
      dex: SANDBOX_DEX,
      inputAsset: i === 0 ? request.inputAsset : path[i]!,
      outputAsset: i + 2 === path.length ? request.outputAsset : path[i + 1]!,
      inAmountRaw: amount,
      outAmountRaw: hop.amountOut,
      feeRaw: hop.fee,
    });
    amount = hop.amountOut;
  }
  return {
    inAmountRaw: request.amountRaw,
    outAmountRaw: amount,
    otherAmountThresholdRaw: thresholdOf('ExactIn', request.amountRaw, amount, request.slippageBps),
    priceImpact: 1 - kept,
    hops,
    raw: {
      router: ROUTER_ADDRESS,
      path,
      amounts: [request.amountRaw, ...hops.map((h) => h.outAmountRaw)].map(String),
      reserves,
      feeBps: 30,
    },
  };
}

/**
 * USD prices on a network from its pools: USDT and USDC at $1 (as Solana's sandbox prices its
 * stablecoins), the native coin (and its wrapped token) by its USDC pool, cNGN by its pool with
 * the wrapped coin. Keyed by contract in lower case, the native coin by EVM_NATIVE_ASSET.
 */
export async function poolUsdPrices(chain: EvmChain, network: EvmNetwork): Promise<Map<string, number>> {
  const spec = EVM_NETWORK_SPECS[network];
  const address = (symbol: string) => {
    const token = spec.tokens.find((t) => t.symbol === symbol);
    return token ? lower(sandboxTokenAddress(network, token)) : undefined;
  };
  const units = (symbol: string) => 10 ** spec.tokens.find((t) => t.symbol === symbol)!.decimals;
  const prices = new Map<string, number>();
  for (const stable of ['USDT', 'USDC']) if (address(stable)) prices.set(address(stable)!, 1);
  const wrapped = wrappedNative(network);
  const w = address(wrapped.symbol)!;
  const [wReserve, usdcReserve] = await reservesOf(chain, w, address('USDC')!);
  const nativeUsd = Number(usdcReserve) / units('USDC') / (Number(wReserve) / 1e18);
  prices.set(w, nativeUsd);
  prices.set(lower(EVM_NATIVE_ASSET), nativeUsd);
  const cngn = address('CNGN');
  if (cngn) {
    const [cngnReserve, wOfCngn] = await reservesOf(chain, cngn, w);
    prices.set(cngn, (Number(wOfCngn) / 1e18 / (Number(cngnReserve) / units('CNGN'))) * nativeUsd);
  }
  return prices;
}
