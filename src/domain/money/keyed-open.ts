import type { Database, Tx } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import { type Idempotency, type IdempotencyScope, replay } from '../idempotency/idempotency.js';
import { insufficientFunds } from '../ledger/ledger.js';
import { type Opened, openKeyed } from '../lifecycle/keyed.js';
import { claimOf, isRefusal, type KeyRef, type KeyRow, retryOnKeyRace } from './key-claim.js';
import { refuseTakenReference } from './reference.js';

/** A keyed request: the key's scope, the key (if sent) and the input its fingerprint covers. */
export interface Keyed {
  scope: IdempotencyScope;
  key: string | undefined;
  input: unknown;
}

/**
 * What an operation's one-statement open (money/held-open.ts) answered. A reference another
 * operation holds is not an answer: the statement fails on its unique index, refused by name.
 */
export type StatementOpened<Row> =
  | { opened: Row }
  /** The key's row, when the key was busy or held something: nothing was written. */
  | { claim: KeyRow }
  | { insufficient: true };

export interface KeyedOpen<Row> {
  owner: { userId: string; environment: Environment };
  reference: string;
  keyed: Keyed;
  /** The unique indexes whose refusal of the open means "this reference is taken" (a 409, not a fault). */
  referenceConstraints: readonly string[];
  /** The record's id, when `steps` is given it to write (the key is then recorded with it first: lifecycle/keyed.ts). */
  recordId?: string;
  /**
   * The first commit as a transaction of steps, under the key's claim: the operation's own writes
   * (its record, its wallet transaction, its jobs, a held operation's `hold`). Returns the record.
   */
  steps: (tx: Tx) => Promise<Row>;
  /**
   * The same first commit as one statement, where the operation has one (a bill's, a deposit's,
   * a payout's): the key is claimed in it. A key it finds running (a request that died) is taken
   * over by `steps`. A refusal it throws (a limit) is stored as the key's answer.
   */
  statement?: (key: KeyRef | null, leaseUntil: Date) => Promise<StatementOpened<Row>>;
}

/**
 * The first of the two commits of an operation that calls a provider (a bill, a payout, a
 * deposit), with everything around it that is the same for all of them: the Idempotency-Key's
 * claim (replay, 422 for other input, 409 for a twin in flight), the one retry when a twin's
 * answer committed after the statement's snapshot, a key a dead request left running taken over
 * (`resumed`), too little money refused through the key, and a reference another operation
 * holds refused by name (409 naming its transaction), never a fault.
 */
export async function openKeyedOperation<Row extends { id: string }>(
  db: Database,
  idempotency: Idempotency,
  now: Date,
  o: KeyedOpen<Row>,
  current: (tx: Tx, id: string) => Promise<Row>,
): Promise<Opened<Row>> {
  const key = idempotency.keyRef(o.keyed.scope, o.keyed.key, o.keyed.input) ?? null;
  const refuseTaken = (error: unknown) =>
    refuseTakenReference<Row>(db, idempotency, key ?? undefined, o.owner, o.reference, o.referenceConstraints, error);
  if (o.statement) {
    const leaseUntil = new Date(now.getTime() + idempotency.leaseMs);
    const statement = o.statement;
    let opened: StatementOpened<Row>;
    try {
      opened = await retryOnKeyRace(() => statement(key, leaseUntil));
    } catch (error) {
      // A check of the operation's own refused it (a limit): the refusal is the key's answer.
      if (isRefusal(error)) return { done: await idempotency.refuse<Row>(key ?? undefined, error) };
      return { done: await refuseTaken(error) };
    }
    if ('opened' in opened) return { opened: opened.opened, ref: key };
    if ('insufficient' in opened) return { done: await idempotency.refuse<Row>(key ?? undefined, insufficientFunds()) };
    const claim = claimOf(opened.claim, key!.requestHash);
    if ('replay' in claim) return { done: replay<Row>(claim.replay) };
    // A key a dead or failed request left running: taken over below, its record finished.
  }
  return openKeyed(db, idempotency, now, o.keyed, o.steps, current, o.recordId).catch(async (error: unknown) => ({
    // The reference may be another operation's (a transfer's, a deposit's): refused by name, not
    // a fault (or the key's answer, if a twin gave one).
    done: await refuseTaken(error),
  }));
}
