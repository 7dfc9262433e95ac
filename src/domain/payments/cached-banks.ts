import { ReferenceCache } from '../reference-cache.js';
import type { PaymentsProvider } from './payments-provider.js';

/** The provider with its bank list kept for an hour; every other call goes straight through. */
export function withCachedBanks(provider: PaymentsProvider): PaymentsProvider {
  const cache = new ReferenceCache(3600_000);
  const cached: PaymentsProvider = Object.create(provider);
  cached.banks = () => cache.get('banks', () => provider.banks());
  return cached;
}
