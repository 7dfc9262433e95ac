import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { isUniqueViolation } from '../../db/sql-state.js';
import type { Environment } from '../auth/permissions.js';
import { badInput, DomainError } from '../errors.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import type { KeyRef } from './key-claim.js';
import { violatedConstraint } from './plain-write.js';

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

/**
 * The owner's wallet transaction holding `reference`, if any. Every money operation opens one with
 * its reference (unique per owner), so the reference is held there; read here by its unique index,
 * in plain SQL, so the rule needs no domain's store.
 */
export async function referenceHolder(
  db: Executor,
  owner: { userId: string; environment: Environment },
  reference: string,
): Promise<string | undefined> {
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`select id from wallet_transactions
        where user_id = ${owner.userId} and environment = ${owner.environment} and reference = ${reference}`,
  );
  return row?.id;
}

/**
 * The 409 for a reference in use, naming the owner's transaction that holds it, read now (a unique
 * index refused the write, or the holder committed after the refused
 * statement's snapshot).
 */
export async function referenceInUse(
  db: Executor,
  owner: { userId: string; environment: Environment },
  reference: string,
): Promise<DomainError> {
  const id = await referenceHolder(db, owner, reference);
  return id ? referenceTaken(reference, id) : referenceUsed(reference);
}

/**
 * What an operation answers when its write failed with `error`: if one of the reference's unique
 * indexes (`constraints`) refused it (another operation took the reference between a check and
 * the insert, or no check was made), 409 naming the holder, through the Idempotency-Key; any other
 * error is rethrown, a fault.
 */
export async function refuseTakenReference<T>(
  db: Executor,
  idempotency: Idempotency,
  ref: KeyRef | undefined,
  owner: { userId: string; environment: Environment },
  reference: string,
  constraints: readonly string[],
  error: unknown,
): Promise<T> {
  const constraint = violatedConstraint(error);
  if (constraint === undefined || !constraints.includes(constraint)) throw error;
  return idempotency.refuse(ref, await referenceInUse(db, owner, reference));
}
