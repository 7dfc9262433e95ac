import { and, eq } from 'drizzle-orm';
import { chainSends } from '../../db/chain-schema.js';
import type { Database } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { PortfolioSource, RawHolding } from '../portfolio/portfolio.js';
import type { EvmExchangeProvider } from './evm-exchange-provider.js';
import type { EvmReads } from './evm-reads.js';
import { EVM } from './evm-wallets.js';
import { EVM_NATIVE_ASSET } from './exchange-contracts.js';
import { EVM_NETWORKS } from './networks.js';

const PEGGED = new Set(['USDT', 'USDC']);

/**
 * The EVM wallet's parts of the portfolio: one per network. A network the user touched (a send, a
 * swap, or anything held there) lists what it holds, priced by the network's pools; one never used
 * is an empty part, read without creating its chain (a sandbox chain nobody used answers zero).
 * Production serves no EVM network yet: every part is empty there.
 */
export function evmPortfolioSource(
  db: Database,
  reads: EvmReads,
  exchange: (environment: Environment) => EvmExchangeProvider | undefined,
): PortfolioSource {
  return {
    async parts(principal) {
      const empty = (network: string) => ({ family: EVM, network, address: null, touched: false, holdings: [] });
      if (principal.environment !== 'sandbox') return EVM_NETWORKS.map(empty);
      const used = new Set(
        (
          await db
            .selectDistinct({ network: chainSends.network })
            .from(chainSends)
            .where(
              and(
                eq(chainSends.family, EVM),
                eq(chainSends.userId, principal.userId),
                eq(chainSends.environment, principal.environment),
              ),
            )
        ).map((r) => r.network),
      );
      const provider = exchange(principal.environment);
      return Promise.all(
        EVM_NETWORKS.map(async (network) => {
          const view = await reads.portfolio(principal, network);
          const held = [
            { ...view.native, asset: EVM_NATIVE_ASSET },
            ...view.tokens.map((t) => ({ ...t, asset: t.token! })),
          ].filter((b) => b.amountRaw > 0n);
          if (held.length === 0 && !used.has(network)) return empty(network);
          const asOf = new Date();
          const prices =
            held.length > 0 && provider
              ? await provider.usdPrices(
                  network,
                  held.map((b) => b.asset),
                )
              : new Map<string, number>();
          const holdings: RawHolding[] = held.map((b) => {
            const usd = prices.get(b.asset);
            return {
              symbol: b.symbol,
              token: b.token,
              amountRaw: b.amountRaw,
              decimals: b.decimals,
              price:
                usd === undefined
                  ? null
                  : {
                      usd,
                      source: PEGGED.has(b.symbol) ? 'pegged at 1 USD' : `sandbox Uniswap V2 pools on ${network}`,
                      asOf,
                    },
            };
          });
          return { family: EVM, network, address: view.address, touched: true, holdings };
        }),
      );
    },
  };
}
