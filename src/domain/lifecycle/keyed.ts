import type { Database, Executor, Tx } from '../../db/client.js';
import { DomainError } from '../errors.js';
import { type IdempotencyScope, type Idempotency, replay, toStorable } from '../idempotency/idempotency.js';
import {
  answerKey,
  claimKey,
  isRefusal,
  KeyRaceError,
  type KeyRef,
  recordKey,
  refuseKey,
  retryOnKeyRace,
} from '../money/key-claim.js';

const MAX_KEY_LENGTH = 255;

/** What the first transaction of an operation with a provider call produced. */
export type Opened<R> =
  /** Already answered (a replay, or an operation a crashed request left recorded): answer with it. */
  | { done: R }
  /** Recorded, held and announced: call the provider, then settle with `answer` in the settling transaction. */
  | { opened: R; ref: KeyRef | null }
  /**
   * Recorded by a request that died or failed after its first commit (its lease lapsed): the key is
   * leased to this request now. Finish the record (ask the provider how it ended, or send what it
   * never received under the same provider reference) and answer the key in the settling commit.
   */
  | { resumed: R; ref: KeyRef };

/**
 * The first of the two commits of an operation that calls a provider (bills, deposits, payouts):
 * in ONE transaction the Idempotency-Key is claimed (money/key-claim: advisory lock, 409 for a twin
 * in flight, 422 for other input), `open` records the operation with its hold, wallet transaction
 * and events, and the key stays `running` with the record attached for the lease
 * (`idempotency.leaseMs`, from IDEMPOTENCY_LEASE_MS). A retry once the lease is over takes the
 * record over to finish it (`resumed`), never recording it again. A refusal `open` throws rolls
 * back and is stored as the key's answer.
 */
export async function openKeyed<R extends { id: string }>(
  db: Database,
  idempotency: Idempotency,
  now: Date,
  keyed: { scope: IdempotencyScope; key: string | undefined; input: unknown },
  open: (tx: Tx) => Promise<R>,
  current: (tx: Tx, id: string) => Promise<R>,
  /**
   * The record's id, when it is named before the transaction: the key is recorded with it before
   * `open` runs, so a statement that would otherwise follow the operation's contended writes (a
   * wallet's hold, whose row lock lasts to the commit) is out of the way of the next payout.
   */
  recordId?: string,
): Promise<Opened<R>> {
  const ref = keyRef(idempotency, keyed);
  const leaseUntil = new Date(now.getTime() + idempotency.leaseMs);
  let claimed = false;
  try {
    return await retryOnKeyRace(() => {
      claimed = false;
      return db.transaction(async (tx): Promise<Opened<R>> => {
        if (ref) {
          const claim = await claimKey(tx, ref, now);
          if ('replay' in claim) return { done: replay<R>(claim.replay) };
          if ('resume' in claim && claim.resume) {
            // Leased anew to this request while it finishes: a twin retry meanwhile is told to wait.
            await recordKey(tx, ref, claim.resume, leaseUntil, now);
            return { resumed: await current(tx, claim.resume), ref };
          }
        }
        claimed = true;
        if (ref && recordId) await recordKey(tx, ref, recordId, leaseUntil, now);
        const row = await open(tx);
        if (ref && !recordId) await recordKey(tx, ref, row.id, leaseUntil, now);
        return { opened: row, ref };
      });
    });
  } catch (error) {
    if (claimed && ref && isRefusal(error)) await refuseKey(db, ref, error, now);
    throw error;
  }
}

/** The key is `done` with the operation as settled, in the transaction that settles it. */
export async function answer(tx: Executor, ref: KeyRef | null, row: unknown): Promise<void> {
  if (ref) await answerKey(tx, ref, { result: toStorable(row) });
}

/**
 * A resumed operation that needs nothing more (it is final, or only its provider can move it): the
 * key is answered with it as it stands, in a commit of its own. A twin that answered first wins.
 */
export async function answerAsItStands<R>(db: Database, ref: KeyRef | null, row: R): Promise<R> {
  if (!ref) return row;
  await db
    .transaction((tx) => answer(tx, ref, row))
    .catch((error: unknown) => {
      if (!(error instanceof KeyRaceError)) throw error;
    });
  return row;
}

function keyRef(
  idempotency: Idempotency,
  { scope, key, input }: { scope: IdempotencyScope; key: string | undefined; input: unknown },
): KeyRef | null {
  if (key === undefined) return null;
  if (key.length > MAX_KEY_LENGTH)
    throw new DomainError(
      'BAD_USER_INPUT',
      `The Idempotency-Key header must be at most ${MAX_KEY_LENGTH} characters.`,
      {
        field: 'Idempotency-Key',
      },
    );
  return { scope, key, requestHash: idempotency.fingerprint(input) };
}
