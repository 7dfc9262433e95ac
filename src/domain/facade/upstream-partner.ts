import type { CallerCredential } from '../users/user-directory.js';
import { credentialHash } from './upstream-user-directory.js';

/**
 * Whose upstream calls these are, for the waits and budgets shared per partner: a hash of the
 * credential (the upstream rate-limits by credential; the key itself is never a store's key).
 * Worked out once per credential object, which lives as long as its request.
 */
const partners = new WeakMap<CallerCredential, string>();

export function partnerOf(credential: CallerCredential): string {
  let partner = partners.get(credential);
  if (partner === undefined) {
    partner = credentialHash(credential);
    partners.set(credential, partner);
  }
  return partner;
}
