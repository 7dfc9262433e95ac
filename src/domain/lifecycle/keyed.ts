import type { Database, Executor, Tx } from '../../db/client.js';
import { DomainError } from '../errors.js';
import { type IdempotencyScope, type Idempotency, replay, toStorable } from '../idempotency/idempotency.js';
import { answerKey, claimKey, isRefusal, KeyRaceError, type KeyRef, recordKey, refuseKey } from '../money/key-claim.js';

/** How long a key stays `running` across a provider call before a retry may take the operation over. */
const PROVIDER_CALL_LEASE_MS = 60_000;
const MAX_KEY_LENGTH = 255;

/** What the first transaction of an operation with a provider call produced. */
export type Opened<R> =
  /** Already answered (a replay, or an operation a crashed request left recorded): answer with it. */
  | { done: R }
  /** Recorded, held and announced: call the provider, then settle with `answer` in the settling transaction. */
  | { opened: R; ref: KeyRef | null };

/**
 * The first of the two commits of an operation that calls a provider (bills, deposits, payouts):
 * in ONE transaction the Idempotency-Key is claimed (money/key-claim: advisory lock, 409 for a twin
 * in flight, 422 for other input), `open` records the operation with its hold, wallet transaction
 * and events, and the key stays `running` with the record attached. A retry after a crash (lease
 * over) answers with the record as it stands. A refusal `open` throws rolls back and is stored as
 * the key's answer.
 */
export async function openKeyed<R extends { id: string }>(
  db: Database,
  idempotency: Idempotency,
  now: Date,
  keyed: { scope: IdempotencyScope; key: string | undefined; input: unknown },
  open: (tx: Tx) => Promise<R>,
  current: (tx: Tx, id: string) => Promise<R>,
): Promise<Opened<R>> {
  const ref = keyRef(idempotency, keyed);
  for (let attempt = 0; ; attempt++) {
    let claimed = false;
    try {
      return await db.transaction(async (tx): Promise<Opened<R>> => {
        if (ref) {
          const claim = await claimKey(tx, ref, now);
          if ('replay' in claim) return { done: replay<R>(claim.replay) };
          if ('resume' in claim && claim.resume) {
            const row = await current(tx, claim.resume);
            await answerKey(tx, ref, { result: toStorable(row) });
            return { done: row };
          }
        }
        claimed = true;
        const row = await open(tx);
        if (ref) await recordKey(tx, ref, row.id, new Date(now.getTime() + PROVIDER_CALL_LEASE_MS), now);
        return { opened: row, ref };
      });
    } catch (error) {
      if (error instanceof KeyRaceError && attempt === 0) continue;
      if (claimed && ref && isRefusal(error)) await refuseKey(db, ref, error, now);
      throw error;
    }
  }
}

/** The key is `done` with the operation as settled, in the transaction that settles it. */
export async function answer(tx: Executor, ref: KeyRef | null, row: unknown): Promise<void> {
  if (ref) await answerKey(tx, ref, { result: toStorable(row) });
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
