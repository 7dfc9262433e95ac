import { and, eq } from 'drizzle-orm';
import { chainSends } from '../../db/chain-schema.js';
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

/**
 * The market makers of a sandbox exchange on one network, as reconciliation needs them: what they
 * held of each asset at genesis (all pools together), what they hold now on the chain, and how the
 * family names its native coin. A family's sandbox supplies it (Solana's: solana/sandbox-market-makers.ts),
 * given here by the wiring (services.ts), so reconciliation reads no family's sandbox.
 */
export interface MarketMakers {
  /** The chain family whose swaps they take (chain_sends.family). */
  family: string;
  network: string;
  /** The native coin's asset key in these figures (a swap row names it by a null asset), and its currency label. */
  native: { asset: string; currency: string };
  /** Raw units of each asset all the makers held at genesis. */
  genesis: ReadonlyMap<string, bigint>;
  /** Whether the makers' pools exist yet (an EVM network's are deployed on first exchange use); always, without it. */
  deployed?(): Promise<boolean>;
  /** Raw units of each asset all the makers hold now, as the chain says. */
  held(): Promise<Map<string, bigint>>;
}

/**
 * A sandbox network's market makers: the pools' wallets hold, per asset, their genesis reserves
 * plus every swap the gateway recorded on that network (the input paid in, the output paid out).
 * Compared per asset over all pools together: a multi-hop swap's intermediate token passes from one
 * pool to the next and nets out, and a swap row names only its first input and last output. Nothing
 * else moves a pool's tokens (its key signs only the gateway's swaps; the user pays the fees), so
 * the figures agree to the base unit.
 */
export function marketMakerSource(makers: MarketMakers): ReconciliationSource {
  const { native } = makers;
  return {
    provider: `${makers.family}-${makers.network}-market-makers`,
    environment: 'sandbox',
    async items(db, window) {
      // A balance is of the run, not of a moment in the day: stamped inside the day so it is reported.
      const at = new Date((window.from.getTime() + window.to.getTime()) / 2);
      const recorded = async () => {
        const expected = new Map((await makers.deployed?.()) === false ? [] : makers.genesis);
        const swaps = await db
          .select({
            asset: chainSends.asset,
            amountRaw: chainSends.amountRaw,
            outputAsset: chainSends.outputAsset,
            outputAmountRaw: chainSends.outputAmountRaw,
          })
          .from(chainSends)
          .where(
            and(
              eq(chainSends.family, makers.family),
              eq(chainSends.environment, 'sandbox'),
              eq(chainSends.network, makers.network),
              eq(chainSends.kind, 'swap'),
              eq(chainSends.status, 'confirmed'),
            ),
          );
        for (const swap of swaps) {
          const input = swap.asset ?? native.asset;
          expected.set(input, (expected.get(input) ?? 0n) + swap.amountRaw);
          if (swap.outputAsset)
            expected.set(swap.outputAsset, (expected.get(swap.outputAsset) ?? 0n) - (swap.outputAmountRaw ?? 0n));
        }
        return expected;
      };
      const onChain = () => makers.held();
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
      const record = (asset: string, amount: bigint) => ({
        reference: `market-makers:${asset}`,
        providerRef: `market-makers:${asset}`,
        amount,
        currency: asset === native.asset ? native.currency : asset,
        status: 'succeeded' as const,
        at,
      });
      return [
        {
          itemType: 'market_maker_balance',
          direction: 'out',
          clearing: false,
          compare: 'balances',
          ours: [...expected].map(([asset, amount]) => ({
            ...record(asset, amount),
            itemType: 'market_maker_balance',
          })),
          theirs: [...held].map(([asset, amount]) => record(asset, amount)),
        },
      ];
    },
  };
}
