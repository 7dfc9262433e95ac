import type { Caller } from '../domain/users/user-directory.js';
import type { GraphQLContext } from './context.js';

/** Who asks, as the domain interfaces take it (the guard has checked the principal). */
export const callerOf = (context: GraphQLContext): Caller => ({
  principal: context.principal!,
  credential: context.credential,
});
