import { DomainError } from '../../domain/errors.js';
import type { Services } from '../../services.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/** The inbound webhooks of a facade; in service mode the gateway is its own event source. */
const inboundOf = (services: Services) => {
  if (!services.inboundWebhooks)
    throw new DomainError(
      'NOT_FOUND',
      'Upstream webhook secrets are taken in facade mode only: this gateway records its own events (docs/facade.md).',
    );
  return services.inboundWebhooks;
};

export const facadeInboundResolvers: Resolvers = {
  Query: {
    upstreamWebhookReceiver: (_root, _args, { principal, services }) => inboundOf(services).receiver(principal!),
  },
  Mutation: {
    registerUpstreamWebhookSecret: (_root, { secret, readKey }, { principal, services }) =>
      inboundOf(services).register(principal!, { secret, readKey }),
  },
};
