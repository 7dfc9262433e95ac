import { decodeFunctionResult, encodeFunctionData, type Hex, hexToBytes } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.js';
import { ALLOWANCE_ABI, PAIR_ABI, ROUTER_ABI, sortTokens } from '../../src/domain/evm/exchange-contracts.js';
import {
  FACTORY_ADDRESS,
  MARKET_MAKER_ADDRESS,
  pairAddress,
  ROUTER_ADDRESS,
  sandboxTokenAddress,
  seededPools,
} from '../../src/domain/evm/sandbox-pools.js';
import { sandboxEvmChains } from '../../src/domain/evm/sandbox-chains.js';
import { outGivenInV2 } from '../../src/domain/chain/pool-math.js';
import { isolatedTestDatabase, onPostgres } from '../helpers/database.js';
import { newSigner } from '../evm/sandbox-signing.js';

const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}` as Hex;

describe('the sandbox exchange on an EVM network', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await isolatedTestDatabase();
  });
  afterAll(async () => {
    if (onPostgres) await handle.close();
  });

  it('deploys the npm artifacts unchanged, seeds every pool with the market maker as its owner, and prices by x·y=k', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('polygon');
    await chain.ensureExchange();
    // A second call (another request, another instance) finds it there and does nothing.
    const height = await chain.height();
    await chain.ensureExchange();
    expect(await chain.height()).toBe(height);
    const factory = await chain.call({
      to: ROUTER_ADDRESS,
      data: hexToBytes(encodeFunctionData({ abi: parseFactoryAbi, functionName: 'factory' })),
    });
    expect(BigInt(hex(factory))).toBe(BigInt(FACTORY_ADDRESS));
    for (const pool of seededPools('polygon')) {
      const a = sandboxTokenAddress('polygon', pool.a);
      const b = sandboxTokenAddress('polygon', pool.b);
      const pair = pairAddress(a, b);
      const [reserve0, reserve1] = decodeFunctionResult({
        abi: PAIR_ABI,
        functionName: 'getReserves',
        data: hex(
          await chain.call({
            to: pair,
            data: hexToBytes(encodeFunctionData({ abi: PAIR_ABI, functionName: 'getReserves' })),
          }),
        ),
      });
      const [t0] = sortTokens(a, b);
      const [reserveA, reserveB] = t0 === a.toLowerCase() ? [reserve0, reserve1] : [reserve1, reserve0];
      expect([reserveA, reserveB]).toEqual([pool.reserveA, pool.reserveB]);
      // The liquidity tokens are the market maker's (all but the 1,000 the pair locks forever).
      expect(await chain.tokenBalance(MARKET_MAKER_ADDRESS, pair)).toBeGreaterThan(0n);
      // Router02 finds the pair by the init-code hash it was compiled with, and prices by the pool formula.
      const amountIn = pool.reserveA / 1_000n;
      const amounts = decodeFunctionResult({
        abi: ROUTER_ABI,
        functionName: 'getAmountsOut',
        data: hex(
          await chain.call({
            to: ROUTER_ADDRESS,
            data: hexToBytes(
              encodeFunctionData({ abi: ROUTER_ABI, functionName: 'getAmountsOut', args: [amountIn, [a, b]] }),
            ),
          }),
        ),
      });
      expect(amounts[1]).toBe(outGivenInV2(pool.reserveA, pool.reserveB, amountIn).amountOut);
    }
  });

  it("a swap's gas estimate counts the pair's once-a-second price update, even made in its last trade's second", async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('scroll');
    // The chain's clock held still, a little ahead of the head, then moved on a second: the pools
    // are seeded and the approval mined in one second, the swap lands in the next.
    const second = BigInt(Math.floor(Date.now() / 1000)) + 5n;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Number(second) * 1000);
    try {
      await chain.ensureExchange();
      const trader = newSigner();
      await chain.faucet(trader.address, { native: true }, 10n ** 18n);
      await chain.faucet(trader.address, { token: 'USDC' }, 1_000_000n);
      const usdc = chain.tokenAddress('USDC') as Hex;
      const usdt = chain.tokenAddress('USDT') as Hex;
      const approval = await chain.sendRaw(
        await trader.sign(chain, {
          to: usdc,
          data: encodeFunctionData({ abi: ALLOWANCE_ABI, functionName: 'approve', args: [ROUTER_ADDRESS, 1_000_000n] }),
        }),
      );
      expect((await chain.receipt(approval))?.status).toBe('success');
      const swap = encodeFunctionData({
        abi: ROUTER_ABI,
        functionName: 'swapExactTokensForTokens',
        args: [1_000_000n, 0n, [usdc, usdt], trader.address, 2n ** 64n],
      });
      // Estimated in the second the pair last traded in (its seeding), where it would write no price.
      const estimate = await chain.estimateGas({ from: trader.address, to: ROUTER_ADDRESS, data: hexToBytes(swap) });
      clock.mockReturnValue(Number(second + 1n) * 1000);
      // Signed as the gateway signs a leg: a fifth above the estimate (evm-transfers.ts feePlan).
      const gas = (estimate * 6n) / 5n;
      const hash = await chain.sendRaw(await trader.sign(chain, { to: ROUTER_ADDRESS, data: swap, gas }));
      const receipt = (await chain.receipt(hash))!;
      expect(receipt.status).toBe('success');
      expect(receipt.gasUsed).toBeLessThanOrEqual(estimate);
    } finally {
      clock.mockRestore();
    }
  });
});

const parseFactoryAbi = [
  { type: 'function', name: 'factory', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
] as const;
