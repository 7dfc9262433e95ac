import type { Principal } from '../auth/principal.js';
import type { Business, User } from './user.js';

/** How the caller's credential came: `X-API-KEY`, or `Authorization: Bearer`. */
export type CredentialScheme = 'api-key' | 'bearer';

/** The credential as the caller sent it, for a domain that asks an upstream with it; never stored or logged. */
export interface CallerCredential {
  value: string;
  scheme: CredentialScheme;
  /** The client's address as the gateway saw it, for an upstream that checks keys' IP allow-lists. */
  clientIp?: string | undefined;
  /**
   * What the request may still ask of the upstream (facade mode, domain/facade/upstream-allowance.ts):
   * each call takes one, and gets what remains of the request's deadline. Absent: a job's call, bounded by its own timeout.
   */
  allowance?: CallAllowance | undefined;
}

/** One request's upstream calls: `take` answers the milliseconds the next call may wait, or throws (nothing to send). */
export interface CallAllowance {
  take(): number;
}

/** Who asks: the authenticated principal, and the credential it came with. */
export interface Caller {
  principal: Principal;
  credential: CallerCredential | undefined;
}

/**
 * The user domain as the graph reads it. Bound once at start-up: to the gateway's own UserService
 * (service mode) or to the upstream REST v1 deployment (facade mode, upstream-user-directory.ts).
 * Resolvers call it without knowing which; an answer may be synchronous when it is cached.
 */
export interface UserDirectory {
  /** The user the caller's credential acts for. */
  currentUser(caller: Caller): User | Promise<User>;
  /** The business accounts a user owns. */
  ownedBusinesses(caller: Caller, user: User): Promise<Business[]>;
}
