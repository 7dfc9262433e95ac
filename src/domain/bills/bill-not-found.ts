import { DomainError } from '../errors.js';

/** The spec's bill-not-found answer (404, `errorCode: BILL_NOT_FOUND`), whoever keeps the records. */
export const billNotFound = (reference: string) =>
  new DomainError('BILL_NOT_FOUND', `Bill transaction with reference ${JSON.stringify(reference)} was not found.`, {
    reference,
  });
