import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { type Database, type Executor, queryRows } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import { DomainError, type ErrorCode, type FieldProblem, type LimitInfo } from '../errors.js';
import type { IdempotencyScope } from '../idempotency/idempotency.js';
import {
  claimColumns,
  claimCtes,
  doneKeyInsert,
  KEY_CONSTRAINT,
  keyRowOf,
  runningKeyInsert,
  violatedConstraint,
} from './plain-write.js';

/**
 * The idempotency claim taken INSIDE the operation's own transaction: no separately committed
 * "running" row before the work, so an operation without a provider call commits once.
 *
 * Contract (every money operation follows it):
 * 1. `claimKey(tx, key)` first in the transaction. It takes a transaction-scoped advisory lock on a
 *    64-bit hash of (owner, environment, operation, key) without waiting and reads the key's row.
 *    - lock busy (the same key's transaction is open right now): 409 CONFLICT;
 *    - row `done`, same fingerprint: `{ replay }` — answer with it, write nothing;
 *    - other fingerprint: 422 IDEMPOTENCY_KEY_REUSED;
 *    - row `running` (an operation that committed before calling its provider): 409 while its lease
 *      lasts, `{ resume: resourceId }` once it ran out (its process died);
 *    - no row: `{ fresh }` — do the work.
 * 2. The effect, then `answerKey(tx, key, result)` in the SAME transaction: the key becomes `done`
 *    with the answer to replay exactly when the effect commits, never before or after.
 *    Operations that must commit before a provider call use `recordKey(tx, key, resourceId, lease)`
 *    in that first transaction and `answerKey` in the one that settles.
 * 3. A refusal (a DomainError below 500) rolls the transaction back and is stored with `refuseKey`
 *    in a short transaction of its own (under the same lock): the refusal had no effect to protect.
 *
 * The lock is released by COMMIT or ROLLBACK, so a crash never leaves a key claimed. The lookup
 * shares a statement with the lock, so its snapshot can miss a row a concurrent transaction
 * committed just before the lock was granted; `answerKey` then meets that row and throws
 * `KeyRaceError` — roll back and run the claim again, which replays (`Idempotency.transaction`
 * does this). Two keys whose hashes collide (1 in 2⁶⁴) merely take turns.
 */
export interface KeyRef {
  scope: IdempotencyScope;
  key: string;
  /** The keyed fingerprint of the request's input (`Idempotency.fingerprint`). */
  requestHash: string;
}

/** A refusal as stored for a key: everything the first answer carried, so its replay is the same answer. */
export interface StoredRefusal {
  code: ErrorCode;
  message: string;
  field?: string;
  details?: FieldProblem[];
  reference?: string;
  limit?: LimitInfo;
  scope?: string;
}

export type Stored = { result: unknown } | { error: StoredRefusal };

/** The refusal to store for a key (every field of it a caller reads, never its cause). */
export function storedRefusal(error: DomainError): Stored {
  const { code, message, field, details, reference, limit, scope } = error;
  return {
    error: {
      code,
      message,
      ...(field !== undefined ? { field } : {}),
      ...(details !== undefined ? { details } : {}),
      ...(reference !== undefined ? { reference } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(scope !== undefined ? { scope } : {}),
    },
  };
}

export type KeyClaim = { fresh: true } | { replay: Stored } | { resume: string | null };

/**
 * Whether an attempt met a twin's key committed after its snapshot: its steps found the row taken
 * (`KeyRaceError`), or its one statement met the key's unique index.
 */
export const isKeyRace = (error: unknown): boolean =>
  error instanceof KeyRaceError || violatedConstraint(error) === KEY_CONSTRAINT;

/**
 * Runs a keyed attempt, and once more when it raced a twin (`isKeyRace`): the second attempt's
 * claim sees the twin's row, so it replays the twin's answer or waits its turn. Every keyed write
 * retries through here, once.
 */
export async function retryOnKeyRace<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (!isKeyRace(error)) throw error;
    return attempt();
  }
}

/** A concurrent request with the same key committed between this one's snapshot and its lock. */
export class KeyRaceError extends Error {
  constructor() {
    super('The Idempotency-Key was answered by a concurrent request; claim it again to replay.');
    this.name = 'KeyRaceError';
  }
}

/** The advisory lock id of a key: the first 8 bytes of a SHA-256, as a signed 64-bit integer. */
export function keyLockId(scope: IdempotencyScope, key: string): string {
  const digest = createHash('sha256')
    .update(`${scope.userId}\u0000${scope.environment}\u0000${scope.operation}\u0000${key}`)
    .digest();
  return digest.readBigInt64BE(0).toString();
}

export const keyBusy = () =>
  new DomainError(
    'CONFLICT',
    'A request with this Idempotency-Key is still being processed. Retry after it finishes.',
    {
      field: 'Idempotency-Key',
    },
  );

export const keyReused = () =>
  new DomainError(
    'IDEMPOTENCY_KEY_REUSED',
    'This Idempotency-Key was already used with a different request body. Use a new key for a new request.',
    { field: 'Idempotency-Key' },
  );

export interface KeyRow {
  locked: boolean;
  status: 'running' | 'done' | null;
  request_hash: string | null;
  response: Stored | null;
  resource_id: string | null;
  lease_over: boolean | null;
}

/** Interprets the claim statement's row (shared with stores that fold the claim into a bigger statement). */
export function claimOf(row: KeyRow, requestHash: string): KeyClaim {
  if (!row.locked) throw keyBusy();
  if (row.status === null) return { fresh: true };
  if (row.request_hash !== requestHash) throw keyReused();
  if (row.status === 'done') return { replay: row.response as Stored };
  if (!row.lease_over) throw keyBusy();
  return { resume: row.resource_id };
}

/**
 * The claim as a statement of its own: the same CTEs (plain-write.ts `claimCtes`) the one-statement
 * writes fold into theirs, so the claim is written once whichever way an operation takes it.
 */
const CLAIM = statement(
  'key_claim_v1',
  `with ${claimCtes({ lockId: '$1', userId: '$2', environment: '$3', operation: '$4', key: '$5', now: '$6' })}
  select ${claimColumns} from (select 1) one left join prior p on true`,
);

/** Step 1: lock the key for this transaction and read what it already holds. One round trip. */
export async function claimKey(tx: Executor, ref: KeyRef, now: Date): Promise<KeyClaim> {
  const { scope, key } = ref;
  const [row] = await runIn(tx, CLAIM, [
    keyLockId(scope, key),
    scope.userId,
    scope.environment,
    scope.operation,
    key,
    now.toISOString(),
  ]);
  return claimOf(keyRowOf(row!), ref.requestHash);
}

/**
 * For an operation whose twins must wait for each other rather than be answered 409 (an offramp
 * order, whose retries are all answered with the one order): waits, in the transaction, for the
 * key's lock a twin holds until its commit. `claimKey` run after it, as a statement of its own,
 * reads the key with a snapshot taken once the lock is granted, so it replays the twin's answer.
 */
export async function awaitKey(tx: Executor, ref: KeyRef): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${keyLockId(ref.scope, ref.key)}::bigint)`);
}

/**
 * The answer a key holds, read without its lock: before an operation calls its provider, a retry
 * whose key is answered is answered at once (the claim in the operation's transaction still
 * decides a race). Another request's input is 422; a key with no answer yet is undefined.
 */
export async function keyAnswer(db: Executor, ref: KeyRef): Promise<Stored | undefined> {
  const { scope, key } = ref;
  const [row] = await queryRows<{ request_hash: string; status: string; response: Stored | null }>(
    db,
    sql`select request_hash, status, response from idempotency_keys where user_id = ${scope.userId}
        and environment = ${scope.environment} and operation = ${scope.operation} and key = ${key}`,
  );
  if (!row) return undefined;
  if (row.request_hash !== ref.requestHash) throw keyReused();
  return row.status === 'done' ? (row.response as Stored) : undefined;
}

/** For operations that commit before a provider call: the key stays `running` with the record attached. */
export async function recordKey(
  tx: Executor,
  ref: KeyRef,
  resourceId: string,
  leaseUntil: Date,
  now: Date,
): Promise<void> {
  // Only a `running` row whose lease is over is taken over. The claim's one statement reads the key
  // with a snapshot taken before its try-lock, so a request whose twin committed in between sees no
  // row: taking over a live row here would record (and send) the operation twice.
  const rows = await runIn(tx, RECORD_KEY, [
    ...keyValues(ref),
    resourceId,
    leaseUntil.toISOString(),
    now.toISOString(),
  ]);
  if (rows.length === 0) throw new KeyRaceError();
}

const KEY_PARAMS = { userId: '$1', environment: '$2', operation: '$3', key: '$4', requestHash: '$5' } as const;

/** A key's row values in KEY_PARAMS' order: the first five parameters of every key statement below. */
const keyValues = ({ scope, key, requestHash }: KeyRef) =>
  [scope.userId, scope.environment, scope.operation, key, requestHash] as const;

const RECORD_KEY = statement(
  'key_record_v1',
  `${runningKeyInsert({ ...KEY_PARAMS, resourceId: '$6', leaseUntil: '$7' }, 'true', '$8')}
    returning 1`,
);

const ANSWER_KEY = statement(
  'key_answer_v1',
  `${doneKeyInsert({ ...KEY_PARAMS, response: '$6' }, 'true', true)}
    returning 1`,
);

const REFUSE_KEY = statement('key_refuse_v1', doneKeyInsert({ ...KEY_PARAMS, response: '$6' }, 'true', false));

/** Step 2: the key is `done` with `stored` as its answer, in the transaction that commits the effect. */
export async function answerKey(tx: Executor, ref: KeyRef, stored: Stored): Promise<void> {
  const rows = await runIn(tx, ANSWER_KEY, [...keyValues(ref), JSON.stringify(stored)]);
  if (rows.length === 0) throw new KeyRaceError();
}

/**
 * Step 3: stores a refusal as the key's answer, after the work's transaction rolled back. Waits for
 * the key's lock (a retry may hold it). When the key already has an answer (a concurrent retry got
 * there first) that answer is returned, to replay instead; another request's input is 422.
 */
export async function refuseKey(db: Database, ref: KeyRef, error: DomainError, now: Date): Promise<Stored | undefined> {
  const { scope, key } = ref;
  const stored = storedRefusal(error);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${keyLockId(scope, key)}::bigint)`);
    const [existing] = await queryRows<{
      request_hash: string;
      status: string;
      response: Stored | null;
      lease_live: boolean | null;
    }>(
      tx,
      sql`select request_hash, status, response, locked_until > ${now.toISOString()}::timestamptz as lease_live
          from idempotency_keys where user_id = ${scope.userId}
          and environment = ${scope.environment} and operation = ${scope.operation} and key = ${key}`,
    );
    if (existing && existing.request_hash !== ref.requestHash) throw keyReused();
    if (existing?.status === 'done') return existing.response as Stored;
    // A live `running` row is a twin request in flight (its claim committed after this request's
    // claim read the key): this refusal, read against the twin's effect, is not the key's answer.
    if (existing?.lease_live) throw keyBusy();
    // A `running` row whose lease is over belongs to a two-commit operation: its record settles it.
    if (existing) return undefined;
    await runIn(tx, REFUSE_KEY, [...keyValues(ref), JSON.stringify(stored)]);
    return undefined;
  });
}

/**
 * Removes a key left `running` with no record by a process that died (its lease lapsed), so a
 * one-commit operation can claim it afresh; answers whether it did. Nothing had been done under it.
 */
export async function dropLapsedKey(db: Executor, ref: KeyRef, now: Date): Promise<boolean> {
  const { scope, key } = ref;
  const rows = await queryRows(
    db,
    sql`delete from idempotency_keys where user_id = ${scope.userId} and environment = ${scope.environment}
        and operation = ${scope.operation} and key = ${key} and status = 'running' and resource_id is null
        and (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
        returning 1`,
  );
  return rows.length > 0;
}

/** Whether a refusal is an answer to keep (a client's mistake or a business rule), not a fault or a "later" (429) to retry. */
export const isRefusal = (error: unknown): error is DomainError =>
  error instanceof DomainError && error.status < 500 && error.status !== 429;

/**
 * For a step that records nothing (a deposit's PIN, OTP or 3DS): its provider refused it after the
 * first commit, so the refusal becomes the key's answer, replayed from then on.
 */
export async function answerRefusal(db: Database, ref: KeyRef, error: DomainError): Promise<void> {
  const stored = storedRefusal(error);
  await db
    .transaction((tx) => answerKey(tx, ref, stored))
    .catch((failure) => {
      if (!(failure instanceof KeyRaceError)) throw failure;
    });
}

/**
 * For a step that records nothing: its provider call failed without an answer (a fault, not a
 * refusal), so the key is given back and a retry sends the step afresh.
 */
export async function dropRunningKey(db: Executor, ref: KeyRef): Promise<void> {
  const { scope, key } = ref;
  await queryRows(
    db,
    sql`delete from idempotency_keys where user_id = ${scope.userId} and environment = ${scope.environment}
        and operation = ${scope.operation} and key = ${key} and status = 'running'
        returning 1`,
  );
}
