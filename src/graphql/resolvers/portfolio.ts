import type { Resolvers } from '../generated/resolvers-types.js';

/** One portfolio across naira, Solana and the EVM networks: thin over its service (src/domain/portfolio). */
export const portfolioResolvers: Resolvers = {
  Query: {
    portfolio: (_root, _args, { principal, services }) => services.portfolio.of(principal!),
  },
  PortfolioHolding: { amountRaw: (holding) => holding.amountRaw.toString() },
};
