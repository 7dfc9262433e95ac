import type { BusinessCustomer } from '../customers/business-customer.js';
import type { CustomerInput } from '../customers/customer-service.js';
import type { CustomersDomain } from '../customers/customers-domain.js';
import type { Caller } from '../users/user-directory.js';
import { CustomerAnswer } from './customer-answer.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, bodyOf, credentialOf } from './upstream-json.js';

/** The spec's body fields; a field the caller leaves out is not sent. */
const BODY_FIELDS = ['name', 'phone', 'email', 'externalRef'] as const;

/**
 * Business customers in a facade: the spec's `POST /api/v1/customers/{businessId}` with its four
 * body fields, asked with the caller's own credential (the spec does not show which header the
 * path takes: the one the caller used is sent) and sent once.
 */
export class UpstreamCustomers implements CustomersDomain {
  constructor(private readonly upstream: RestV1Upstream) {}

  async create(caller: Caller, businessId: string, input: CustomerInput): Promise<BusinessCustomer> {
    const body = bodyOf(input, BODY_FIELDS);
    const answer = await askUpstream(
      this.upstream,
      {
        method: 'POST',
        path: `/api/v1/customers/${encodeURIComponent(businessId)}`,
        credential: credentialOf(caller),
        body,
      },
      CustomerAnswer,
    );
    const data = answer.value.data;
    return {
      id: data.id,
      businessId: data.businessId,
      name: data.name,
      phone: data.phone ?? null,
      email: data.email ?? null,
      externalRef: data.externalRef ?? null,
      status: data.status,
      createdAt: new Date(data.createdAt),
      updatedAt: new Date(data.updatedAt),
    };
  }
}
