import type { Caller } from '../users/user-directory.js';
import type { BusinessCustomer } from './business-customer.js';
import type { CustomerInput, CustomerService } from './customer-service.js';

/**
 * Business customers as the graph reads them where the spec shows a path: creating a customer
 * under a business. Bound once at start-up: to this gateway's own CustomerService (service mode)
 * or to the upstream REST v1 deployment (facade mode, facade/upstream-customers.ts).
 */
export interface CustomersDomain {
  create(caller: Caller, businessId: string, input: CustomerInput): Promise<BusinessCustomer>;
}

/** Customers as this gateway's own service keeps them. */
export const localCustomers = (service: CustomerService): CustomersDomain => ({
  create: ({ principal }, businessId, input) => service.create(principal, businessId, input),
});
