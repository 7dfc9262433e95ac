import { mayActFor } from '../../domain/auth/principal.js';
import { notFound } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { displayName, type User } from '../../domain/users/user.js';
import { callerOf } from '../caller.js';
import type { GraphQLContext } from '../context.js';
import { requireAbility } from '../directives/auth.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/**
 * A user the caller may act for, or NOT_FOUND, whether the id is missing or someone else's; without
 * a promise when the user is cached (Loaders.userNow).
 */
function actableUser(context: GraphQLContext, id: string): User | Promise<User> {
  const principal = context.principal!;
  if (!mayActFor(principal, id) || !isUuid(id)) throw notFound('User');
  return context.loaders.userNow(id) ?? loadUser(context, id);
}

async function loadUser(context: GraphQLContext, id: string): Promise<User> {
  const user = await context.loaders.userById.load(id);
  if (!user) throw notFound('User');
  return user;
}

export const userResolvers: Resolvers = {
  Query: {
    // The user domain bound at start-up answers: the gateway's own users, or the upstream's (facade mode).
    me: (_root, _args, context) => context.services.userDirectory.currentUser(callerOf(context)),
    user: (_root, { id }, context) => actableUser(context, id),
  },
  User: {
    // Federation's _entities lands here: it gets the same checks as every other path.
    __resolveReference: async (reference, context) => {
      const principal = requireAbility(context, 'READ');
      if (!mayActFor(principal, reference.id)) return null;
      return context.loaders.userById.load(reference.id);
    },
    name: (user) => user.name ?? displayName(user),
    resetToken: () => null,
    resetTokenExpiry: () => null,
    businesses: (user, _args, context) => context.services.userDirectory.ownedBusinesses(callerOf(context), user),
  },
};
