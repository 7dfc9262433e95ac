import type { Resolvers } from '../generated/resolvers-types.js';

export const webhookResolvers: Resolvers = {
  Query: {
    webhookEndpoints: (_root, _args, { principal, services }) => services.webhooks.list(principal!),
    webhookEndpoint: (_root, { id }, { principal, services }) => services.webhooks.get(principal!, id),
  },
  Mutation: {
    createWebhookEndpoint: (_root, { input }, { principal, services }) => services.webhooks.create(principal!, input),
    updateWebhookEndpoint: (_root, { id, input }, { principal, services }) =>
      services.webhooks.update(principal!, id, input),
    deleteWebhookEndpoint: (_root, { id }, { principal, services }) => services.webhooks.remove(principal!, id),
    rotateWebhookSecret: (_root, { id, gracePeriodSeconds }, { principal, services }) =>
      services.webhooks.rotateSecret(principal!, id, gracePeriodSeconds ?? undefined),
    resendWebhookDelivery: (_root, { id }, { principal, services }) => services.webhooks.resend(principal!, id),
    sendTestWebhook: (_root, { endpointId }, { principal, services }) =>
      services.webhooks.sendTest(principal!, endpointId),
  },
  Subscription: {
    events: {
      subscribe: (_root, { types, after }, { principal, services }) =>
        services.eventFeed.subscribe(principal!, types ?? undefined, after ?? undefined),
      resolve: (event: unknown) => event as never,
    },
  },
  WebhookEndpoint: {
    deliveries: (endpoint, { first }, { principal, services }) =>
      services.webhooks.deliveries(principal!, endpoint.id, first ?? 50),
  },
  WebhookDelivery: {
    attempts: (delivery, _args, { services }) => delivery.attempts ?? services.webhooks.attemptsOf(delivery.id),
  },
};
