import { callerOf } from '../caller.js';
import type { Resolvers } from '../generated/resolvers-types.js';

export const customerResolvers: Resolvers = {
  Query: {
    businessCustomers: (_root, { businessId, status, page, limit }, { principal, services }) =>
      services.customers.list(principal!, businessId, page ?? 1, limit ?? 20, status ?? undefined),
    businessCustomer: (_root, { businessId, id }, { principal, services }) =>
      services.customers.get(principal!, businessId, id),
  },
  Mutation: {
    createBusinessCustomer: (_root, { businessId, input }, context) =>
      context.services.customersDomain.create(callerOf(context), businessId, input),
    updateBusinessCustomer: (_root, { businessId, id, input }, { principal, services }) =>
      services.customers.update(principal!, businessId, id, input),
    disableBusinessCustomer: (_root, { businessId, id }, { principal, services }) =>
      services.customers.disable(principal!, businessId, id),
  },
};
