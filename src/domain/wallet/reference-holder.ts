import type { Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { DomainError } from '../errors.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import type { KeyRef } from '../money/key-claim.js';
import { violatedConstraint } from '../money/plain-write.js';
import { referenceTaken, referenceUsed } from '../money/reference.js';
import { transactionStore } from './transaction-store.js';

/**
 * The 409 for a reference in use, naming the owner's transaction that holds it: the one given,
 * else read now (a unique index refused the write, or the holder committed after the refused
 * statement's snapshot). A reference is held by the owner's wallet transaction, so the holder is
 * looked up here, beside that table, not in money/.
 */
export async function referenceInUse(
  db: Executor,
  owner: { userId: string; environment: Environment },
  reference: string,
  holderId: string | null = null,
): Promise<DomainError> {
  const id = holderId ?? (await transactionStore.findByReference(db, owner, reference))?.id;
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
