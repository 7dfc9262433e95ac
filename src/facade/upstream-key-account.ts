import type { Principal } from '../domain/auth/principal.js';
import { DomainError } from '../domain/errors.js';
import { upstreamPrincipals } from '../domain/facade/upstream-principals.js';
import { UpstreamUserDirectory } from '../domain/facade/upstream-user-directory.js';
import type { Services } from '../services.js';

/**
 * The partner account an upstream key proves, for the facade's set-up outside the API (the page
 * and the CLI): whoever the upstream's `GET /api/v1/user/me` says the key acts for, as for every
 * facade caller, with its row here made sure of. A key the upstream refuses is UNAUTHENTICATED.
 */
export async function accountOfUpstreamKey(services: Services, key: string, clientIp?: string): Promise<Principal> {
  const { userDirectory, config } = services;
  if (!services.inboundWebhooks || !(userDirectory instanceof UpstreamUserDirectory))
    throw new DomainError('NOT_FOUND', 'The upstream webhook set-up is for a facade (GATEWAY_MODE=facade).');
  const principal = await upstreamPrincipals(userDirectory, config.UPSTREAM_ENVIRONMENT)(key, 'api-key', clientIp);
  if (!principal) throw new DomainError('UNAUTHENTICATED', 'The upstream does not accept this key.');
  await services.localOwners.ensure(principal.userId);
  return principal;
}
