import { createRequire } from 'node:module';
import { encodeAbiParameters, encodeFunctionData, type Hex } from 'viem';
import { ALLOWANCE_ABI, ROUTER_ABI } from './exchange-contracts.js';
import {
  FACTORY_ADDRESS,
  MARKET_MAKER_ADDRESS,
  ROUTER_ADDRESS,
  sandboxTokenAddress,
  seededPools,
  wrappedNative,
} from './sandbox-pools.js';
import type { EvmNetwork } from './networks.js';
import { WETH_ABI } from './sandbox-contracts.js';

/**
 * The sandbox exchange's deployment: the steps the market maker's key takes, in nonce order, and
 * what the faucet gives it first. Loaded with the sandbox chain only (the artifacts are large).
 *
 * Bytecode is the npm artifacts' own, unchanged: v2-core 1.0.1's UniswapV2Factory (its pair's
 * creation code inside) and v2-periphery 1.1.0-beta.0's UniswapV2Router02, whose pairFor hashes
 * the same pair code (exchange-contracts.ts PAIR_INIT_CODE_HASH), with the network's genesis WETH9.
 */
const require = createRequire(import.meta.url);
const factoryArtifact = require('@uniswap/v2-core/build/UniswapV2Factory.json') as { bytecode: string };
const routerArtifact = require('@uniswap/v2-periphery/build/UniswapV2Router02.json') as { bytecode: string };

/** A market maker's transaction without its nonce (its place in the list is its nonce). */
export interface MakerStep {
  to?: Hex;
  value?: bigint;
  data: Uint8Array;
  gasLimit: bigint;
}

export interface ExchangeDeployment {
  /** Native coin the faucet sends the market maker: the wrapped side of every pool, and gas. */
  native: bigint;
  /** Tokens the faucet mints to the market maker: each pool's token side. */
  mints: Array<{ contract: Hex; amount: bigint }>;
  steps: MakerStep[];
}

/** Native coin left to the market maker for its own gas (the deployment costs well under 1 unit). */
const GAS_MONEY = 10n ** 20n;
const NEVER = 2n ** 255n;

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex.replace(/^0x/, ''), 'hex'));

export function exchangeDeployment(network: EvmNetwork): ExchangeDeployment {
  const wrapped = sandboxTokenAddress(network, wrappedNative(network));
  const pools = seededPools(network);
  const minted = new Map<Hex, bigint>();
  let wrappedTotal = 0n;
  const steps: MakerStep[] = [
    {
      data: bytes(
        factoryArtifact.bytecode + encodeAbiParameters([{ type: 'address' }], [MARKET_MAKER_ADDRESS]).slice(2),
      ),
      gasLimit: 6_000_000n,
    },
    {
      data: bytes(
        routerArtifact.bytecode +
          encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [FACTORY_ADDRESS, wrapped]).slice(2),
      ),
      gasLimit: 6_000_000n,
    },
  ];
  const approve = (token: Hex, amount: bigint): MakerStep => ({
    to: token,
    data: bytes(encodeFunctionData({ abi: ALLOWANCE_ABI, functionName: 'approve', args: [ROUTER_ADDRESS, amount] })),
    gasLimit: 100_000n,
  });
  const poolSteps: MakerStep[] = [];
  for (const pool of pools) {
    const a = sandboxTokenAddress(network, pool.a);
    const b = sandboxTokenAddress(network, pool.b);
    for (const [token, amount] of [
      [a, pool.reserveA],
      [b, pool.reserveB],
    ] as const) {
      if (token === wrapped) wrappedTotal += amount;
      else minted.set(token, (minted.get(token) ?? 0n) + amount);
      poolSteps.push(approve(token, amount));
    }
    poolSteps.push({
      to: ROUTER_ADDRESS,
      data: bytes(
        encodeFunctionData({
          abi: ROUTER_ABI,
          functionName: 'addLiquidity',
          args: [a, b, pool.reserveA, pool.reserveB, pool.reserveA, pool.reserveB, MARKET_MAKER_ADDRESS, NEVER],
        }),
      ),
      gasLimit: 4_500_000n,
    });
  }
  // The wrapped side is wrapped by WETH9's own deposit, before any pool takes it.
  steps.push({
    to: wrapped,
    value: wrappedTotal,
    data: bytes(encodeFunctionData({ abi: WETH_ABI, functionName: 'deposit' })),
    gasLimit: 100_000n,
  });
  steps.push(...poolSteps);
  return {
    native: wrappedTotal + GAS_MONEY,
    mints: [...minted].map(([contract, amount]) => ({ contract, amount })),
    steps,
  };
}
