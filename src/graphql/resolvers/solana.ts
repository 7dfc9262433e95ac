import type { Resolvers } from '../generated/resolvers-types.js';

export const solanaResolvers: Resolvers = {
  Query: {
    solanaWallet: async (_root, _args, { principal, services }) => ({ address: (await services.solanaWallets.walletOf(principal!)).address }),
  },
};
