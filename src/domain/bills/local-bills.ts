import type { BillsDomain } from './bills-domain.js';
import type { BillsService } from './bills-service.js';

/** The bills domain as this gateway's own service answers it: the caller's principal is all it needs. */
export const localBills = (service: BillsService): BillsDomain => ({
  pay: ({ principal }, input, idempotencyKey) => service.pay(principal, input, idempotencyKey),
  validate: ({ principal }, input) => service.validate(principal, input),
  records: ({ principal }, filter, page, limit) => service.records(principal, filter, page, limit),
  record: ({ principal }, reference) => service.record(principal, reference),
});
