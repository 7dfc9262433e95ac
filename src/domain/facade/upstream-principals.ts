import { ABILITIES } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import type { CredentialScheme } from '../users/user-directory.js';
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
 * The principal's id is a hash of the credential; its environment is `production`, since the spec
 * gives an upstream's caller no way to tell a sandbox key, and nothing the facade answers today
 * reads it.
 */
export function upstreamPrincipals(directory: UpstreamUserDirectory) {
  return async (credential: string, scheme: CredentialScheme, clientIp?: string): Promise<Principal | undefined> => {
    try {
      const user = await directory.userOf({ value: credential, scheme, clientIp });
      return {
        kind: scheme === 'bearer' ? 'oauth_token' : 'api_key',
        credentialId: `upstream:${credentialHash({ value: credential, scheme }).slice(0, 22)}`,
        userId: user.id,
        environment: 'production',
        abilities: EVERY_ABILITY,
      };
    } catch (error) {
      if (error instanceof DomainError && error.code === 'UNAUTHENTICATED') return undefined;
      throw error;
    }
  };
}
