import { DomainError } from '../errors.js';

/**
 * The refusal of a field a facade does not yet ask its upstream for: it answers this rather than
 * reading the facade's own database, which holds none of the upstream's users, keys or money.
 */
export const notInFacade = (field: string) =>
  new DomainError(
    'NOT_IN_FACADE',
    `${field} is not available in facade mode yet: this gateway fronts an upstream REST v1 service and does not answer it from its own records (docs/facade.md).`,
  );
