import type { Resolvers } from '../generated/resolvers-types.js';

export const eventResolvers: Resolvers = {
  Query: {
    events: (_root, { after, first, types }, { principal, services }) =>
      services.events.page(principal!, after ?? 0, first ?? 50, types ?? undefined),
    event: (_root, { id }, { principal, services }) => services.events.get(principal!, id),
  },
  Mutation: {
    triggerSandboxEvent: (_root, { type }, { principal, services, idempotencyKey }) =>
      services.eventTrigger.trigger(principal!, type, idempotencyKey),
  },
  Event: {
    seq: (event) => event.seq ?? 0,
  },
};
