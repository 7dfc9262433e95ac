import type { Environment } from '../auth/permissions.js';
import type { PortfolioSource } from '../portfolio/portfolio.js';
import type { SolanaPortfolio } from './portfolio.js';
import type { TokenDirectory } from './token-directory.js';

/**
 * The Solana wallet as a part of the portfolio: its holdings on the default cluster, priced by the
 * environment's exchange (the sandbox AMM's pools, or Jupiter's prices in production).
 */
export function solanaPortfolioSource(
  portfolio: SolanaPortfolio,
  tokens: TokenDirectory,
  priceSource: (environment: Environment) => string,
): PortfolioSource {
  return {
    async parts(principal) {
      const view = await portfolio.portfolio(principal, null);
      const held = [view.sol, ...view.tokens].filter((t) => t.amountRaw > 0n);
      const asOf = new Date();
      const prices = await tokens.usdPrices(
        principal.environment,
        view.network,
        held.map((t) => t.mint),
      );
      return [
        {
          family: 'solana',
          network: view.network,
          address: view.address,
          touched: true,
          holdings: held.map((t) => {
            const usd = prices.get(t.mint);
            return {
              symbol: t.symbol,
              token: t.symbol === 'SOL' ? null : t.mint,
              amountRaw: t.amountRaw,
              decimals: t.decimals,
              price: usd === undefined ? null : { usd, source: priceSource(principal.environment), asOf },
            };
          }),
        },
      ];
    },
  };
}
