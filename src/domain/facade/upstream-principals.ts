import { ABILITIES } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import type { Environment } from '../auth/permissions.js';
import type { CredentialScheme } from '../users/user-directory.js';
import { localOwnerId } from './inbound-owners.js';
import { credentialHash, type UpstreamUserDirectory } from './upstream-user-directory.js';

/** Every ability: a facade does not know a key's permission, and the upstream checks it on every call it gets. */
const EVERY_ABILITY = new Set(ABILITIES);

/**
 * Facade mode's authentication: a credential is whoever the upstream's `GET /api/v1/user/me` says
 * it acts for (learned once per cache period, upstream-user-directory.ts). A 401 there is a
 * credential this gateway does not accept either (undefined: it counts as a failed authentication);
 * any other failure is thrown, and every guarded field answers it (the upstream unreachable, slow,
 * refusing with 403 or 429).
 *
 * The principal's id is a hash of the credential; its user is the upstream's (as a UUID,
 * inbound-owners.ts), and its environment UPSTREAM_ENVIRONMENT, since the spec gives an upstream's
 * caller no way to tell a sandbox key: it decides which environment's records of the facade's own
 * (events, webhook endpoints) the caller reads and writes.
 */
export function upstreamPrincipals(directory: UpstreamUserDirectory, environment: Environment = 'production') {
  return async (credential: string, scheme: CredentialScheme, clientIp?: string): Promise<Principal | undefined> => {
    try {
      const user = await directory.userOf({ value: credential, scheme, clientIp });
      return {
        kind: scheme === 'bearer' ? 'oauth_token' : 'api_key',
        credentialId: `upstream:${credentialHash({ value: credential, scheme }).slice(0, 22)}`,
        userId: localOwnerId(user.id),
        environment,
        abilities: EVERY_ABILITY,
      };
    } catch (error) {
      if (error instanceof DomainError && error.code === 'UNAUTHENTICATED') return undefined;
      throw error;
    }
  };
}
