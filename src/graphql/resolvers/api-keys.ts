import type { Resolvers } from '../generated/resolvers-types.js';

export const apiKeyResolvers: Resolvers = {
  Query: {
    apiKeys: (_root, _args, { principal, services }) => services.apiKeys.listFor(principal!),
  },
  Mutation: {
    createApiKey: (_root, { input }, { principal, services }) => services.apiKeys.createFor(principal!, input),
    revokeApiKey: (_root, { id }, { principal, services }) =>
      services.apiKeys.revoke(principal!.userId, id, principal!.environment, principal!),
  },
};
