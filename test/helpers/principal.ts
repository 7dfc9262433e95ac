import type { Principal } from '../../src/domain/auth/principal.js';

/** A sandbox API key's principal for `userId` that may read and move money: for calling services directly. */
export const principalOf = (userId: string): Principal => ({
  kind: 'api_key',
  credentialId: 'test',
  userId,
  environment: 'sandbox',
  abilities: new Set(['READ', 'TRANSACT']),
});
