import type { MarketMakers } from '../reconciliation/balances.js';
import type { SolanaChain } from './chain.js';
import { SANDBOX_POOLS, SANDBOX_TOKENS, SOL_MINT, type SandboxPool } from './sandbox-world.js';

const unitsOf = (symbol: string) => 10n ** BigInt(SANDBOX_TOKENS.find((t) => t.symbol === symbol)!.decimals);
const mintOf = (symbol: string) => SANDBOX_TOKENS.find((t) => t.symbol === symbol)!.address;

/**
 * The sandbox AMM's pools on one network as market makers for reconciliation: their genesis
 * reserves and what their wallets hold on the sandbox chain. SOL reserves are the lamports above
 * each wallet's rent reserve (as the pools price them). Given to reconciliation by services.ts.
 */
export function sandboxMarketMakers(chain: SolanaChain, pools: SandboxPool[] = SANDBOX_POOLS): MarketMakers {
  const genesis = new Map<string, bigint>();
  for (const pool of pools) {
    genesis.set(mintOf(pool.a), (genesis.get(mintOf(pool.a)) ?? 0n) + pool.initialA * unitsOf(pool.a));
    genesis.set(mintOf(pool.b), (genesis.get(mintOf(pool.b)) ?? 0n) + pool.initialB * unitsOf(pool.b));
  }
  return {
    family: 'solana',
    network: chain.network,
    native: { asset: SOL_MINT, currency: 'SOL' },
    genesis,
    async held() {
      const rent = await chain.rentExempt(0);
      const held = new Map<string, bigint>();
      for (const pool of pools) {
        const owner = pool.wallet.publicKey.toBase58();
        for (const symbol of [pool.a, pool.b]) {
          const mint = mintOf(symbol);
          const amount =
            mint === SOL_MINT ? (await chain.lamports(owner)) - rent : await chain.associatedTokenAmount(owner, mint);
          held.set(mint, (held.get(mint) ?? 0n) + amount);
        }
      }
      return held;
    },
  };
}
