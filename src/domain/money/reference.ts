import { isUniqueViolation } from '../../db/sql-state.js';
import { badInput, DomainError } from '../errors.js';

/**
 * The reference rule every money operation follows (transfers, deposits, payouts, bills): the
 * format a caller's reference must have, the space reserved to the gateway, and the 409s for a
 * reference already taken. One rule, so a reference valid for one operation is valid for all.
 */
export const REFERENCE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The reference space of transfers into virtual accounts (`VA-<provider's reference>`), closed to callers. */
export const VIRTUAL_ACCOUNT_PREFIX = 'VA-';

/** A caller-given reference, or a new one with the operation's prefix. */
export function referenceFrom(given: string | null | undefined, prefix: string): string {
  if (given === undefined || given === null) return `${prefix}-${crypto.randomUUID()}`;
  const reference = given.trim();
  if (!REFERENCE.test(reference))
    throw badInput('reference', 'reference must be 1 to 64 letters, digits, ".", ":", "-" or "_".');
  // A transfer into a virtual account is recorded as `VA-<provider's reference>`: a reference of
  // the caller's in that space could take it first, and the transfer could then not be credited.
  if (reference.startsWith(VIRTUAL_ACCOUNT_PREFIX))
    throw badInput(
      'reference',
      `references starting with "${VIRTUAL_ACCOUNT_PREFIX}" are reserved for transfers into virtual accounts.`,
    );
  return reference;
}

/** Runs an insert whose unique reference a concurrent request may have taken first: that is a 409. */
export async function insertOrConflict<T>(reference: string, insert: () => Promise<T>): Promise<T> {
  try {
    return await insert();
  } catch (error) {
    if (isUniqueViolation(error)) throw referenceUsed(reference);
    throw error;
  }
}

/** The 409 for a reference in use, when the transaction holding it is not known. */
export const referenceUsed = (reference: string) =>
  new DomainError('CONFLICT', `reference ${JSON.stringify(reference)} is already used. Use a new reference.`, {
    field: 'reference',
  });

/** The 409 for a reference in use, naming the transaction that holds it. */
export const referenceTaken = (reference: string, existingId: string) =>
  new DomainError(
    'CONFLICT',
    `reference ${JSON.stringify(reference)} is already used by transaction ${existingId}. Use a new reference, or the first request's Idempotency-Key to retry it.`,
    { field: 'reference' },
  );
