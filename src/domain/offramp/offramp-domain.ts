import type { Caller } from '../users/user-directory.js';
import type { OfframpAsset } from './offramp-provider.js';
import type { OfframpQuote, OfframpService, QuoteInput } from './offramp-service.js';

/**
 * The offramp as the graph reads it where the spec shows a path: the supported assets and a rate
 * quote. Bound once at start-up: to this gateway's own OfframpService (service mode) or to the
 * upstream REST v1 deployment (facade mode, facade/upstream-offramp.ts).
 */
export interface OfframpDomain {
  assets(caller: Caller): Promise<OfframpAsset[]>;
  quote(caller: Caller, input: QuoteInput): Promise<OfframpQuote>;
}

/** The offramp as this gateway's own service answers it. */
export const localOfframp = (service: OfframpService): OfframpDomain => ({
  assets: ({ principal }) => service.assets(principal),
  quote: ({ principal }, input) => service.quote(principal, input),
});
