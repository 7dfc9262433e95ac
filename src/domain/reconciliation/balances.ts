import { and, eq } from 'drizzle-orm';
import { chainSends } from '../../db/chain-schema.js';
import type { SolanaChain } from '../solana/chain.js';
import { SANDBOX_POOLS, SANDBOX_TOKENS, SOL_MINT, type SandboxPool } from '../solana/sandbox-world.js';
import type { Break, BreakKind, OurRecord } from './matcher.js';
import type { ProviderRecord } from './records.js';
import type { ReconciliationSource } from './sources.js';

/**
 * Balances, unlike movements, are compared as figures: one record per wallet (or wallet class) and
 * token on each side, under the same reference. Any difference is `balance_differs` (or the kind
 * given: a settlement's net is `amount_differs`), carrying both figures; a figure only one side
 * names is compared with zero on the other.
 */
export function compareBalances(
  itemType: string,
  expected: OurRecord[],
  actual: ProviderRecord[],
  kind: BreakKind = 'balance_differs',
): { matched: Date[]; breaks: Break[] } {
  const theirs = new Map(actual.map((r) => [r.reference, r]));
  const ours = new Map(expected.map((r) => [r.reference, r]));
  const matched: Date[] = [];
  const breaks: Break[] = [];
  for (const reference of new Set([...ours.keys(), ...theirs.keys()])) {
    const our = ours.get(reference);
    const their = theirs.get(reference);
    const at = (our ?? their)!.at;
    if ((our?.amount ?? 0n) === (their?.amount ?? 0n)) matched.push(at);
    else
      breaks.push({
        kind,
        itemType,
        reference,
        currency: (our ?? their)!.currency,
        ours: our ?? { ...their!, amount: 0n, providerRef: null, itemType },
        theirs: their ?? { ...our!, amount: 0n, providerRef: reference },
      });
  }
  return { matched, breaks };
}

const unitsOf = (symbol: string) => 10n ** BigInt(SANDBOX_TOKENS.find((t) => t.symbol === symbol)!.decimals);
const mintOf = (symbol: string) => SANDBOX_TOKENS.find((t) => t.symbol === symbol)!.address;

/**
 * A sandbox network's market makers: the pools' wallets hold, per token, their genesis reserves
 * plus every swap the gateway recorded on that network (the input paid in, the output paid out).
 * Compared per token over all pools together: a multi-hop swap's intermediate token passes from one
 * pool to the next and nets out, and a swap row names only its first input and last output. Nothing
 * else moves a pool's tokens (its key signs only the gateway's swaps; the user pays the fees), so
 * the figures agree to the base unit.
 */
export function marketMakerSource(chain: SolanaChain, pools: SandboxPool[] = SANDBOX_POOLS): ReconciliationSource {
  return {
    provider: `solana-${chain.network}-market-makers`,
    environment: 'sandbox',
    async items(db, window) {
      // A balance is of the run, not of a moment in the day: stamped inside the day so it is reported.
      const at = new Date((window.from.getTime() + window.to.getTime()) / 2);
      const genesis = new Map<string, bigint>();
      for (const pool of pools) {
        genesis.set(mintOf(pool.a), (genesis.get(mintOf(pool.a)) ?? 0n) + pool.initialA * unitsOf(pool.a));
        genesis.set(mintOf(pool.b), (genesis.get(mintOf(pool.b)) ?? 0n) + pool.initialB * unitsOf(pool.b));
      }
      const recorded = async () => {
        const expected = new Map(genesis);
        const swaps = await db
          .select({
            mint: chainSends.asset,
            amountRaw: chainSends.amountRaw,
            outputMint: chainSends.outputAsset,
            outputAmountRaw: chainSends.outputAmountRaw,
          })
          .from(chainSends)
          .where(
            and(
              eq(chainSends.family, 'solana'),
              eq(chainSends.environment, 'sandbox'),
              eq(chainSends.network, chain.network),
              eq(chainSends.kind, 'swap'),
              eq(chainSends.status, 'confirmed'),
            ),
          );
        for (const swap of swaps) {
          const input = swap.mint ?? SOL_MINT;
          expected.set(input, (expected.get(input) ?? 0n) + swap.amountRaw);
          if (swap.outputMint)
            expected.set(swap.outputMint, (expected.get(swap.outputMint) ?? 0n) - (swap.outputAmountRaw ?? 0n));
        }
        return expected;
      };
      const onChain = async () => {
        // SOL reserves are the lamports above each wallet's rent reserve (as the pools price them).
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
      };
      // A swap commits its record and the chain's new state together, but the two are read apart:
      // records read before and after the chain must agree, or a swap landed in between (read again).
      const same = (a: Map<string, bigint>, b: Map<string, bigint>) =>
        a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
      let expected = await recorded();
      let held = await onChain();
      for (let attempt = 0; attempt < 5; attempt++) {
        const after = await recorded();
        if (same(expected, after)) break;
        expected = after;
        held = await onChain();
      }
      const record = (mint: string, amount: bigint) => ({
        reference: `market-makers:${mint}`,
        providerRef: `market-makers:${mint}`,
        amount,
        currency: mint === SOL_MINT ? 'SOL' : mint,
        status: 'succeeded' as const,
        at,
      });
      return [
        {
          itemType: 'market_maker_balance',
          direction: 'out',
          clearing: false,
          compare: 'balances',
          ours: [...expected].map(([mint, amount]) => ({ ...record(mint, amount), itemType: 'market_maker_balance' })),
          theirs: [...held].map(([mint, amount]) => record(mint, amount)),
        },
      ];
    },
  };
}
