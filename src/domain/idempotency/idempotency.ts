import { createHmac } from 'node:crypto';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Database, Executor, Tx } from '../../db/client.js';
import { idempotencyKeys } from '../../db/ledger-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { detachedFromTraces } from '../../observability/tracing.js';
import {
  answerKey,
  awaitKey,
  claimKey,
  dropLapsedKey,
  isRefusal,
  type KeyRef,
  keyBusy,
  keyReused,
  refuseKey,
  retryOnKeyRace,
  type Stored,
  storedRefusal,
} from '../money/key-claim.js';

/** The owner, environment and operation a key belongs to: the same key elsewhere is another key. */
export interface IdempotencyScope {
  userId: string;
  environment: Environment;
  operation: string;
}

/** A claimed key: this request does the work. `resourceId` is set when resuming after a crash. */
export interface Claim {
  scope: IdempotencyScope;
  key: string;
  resourceId: string | null;
}

const MAX_KEY_LENGTH = 255;
/** How often a key that could not be released (database unreachable) is tried again. */
const RELEASE_RETRY_MS = 500;

/**
 * Fields whose values are secrets of a card or of its holder: they never enter a fingerprint (nor,
 * since no service returns them, a stored answer). Compared without case, `_` or `-`.
 */
const SECRET_FIELDS = new Set(['pin', 'otp', 'cvv', 'cvv2', 'cvc', 'cardnumber', 'pan', 'password', 'card']);
const isSecretField = (name: string) => SECRET_FIELDS.has(name.toLowerCase().replace(/[_-]/g, ''));

/** A request's input as canonical JSON: key order does not matter, bigints are text, secrets are left out. */
export function canonicalInput(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Date) return v.toISOString();
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>)
          .filter(([k, x]) => x !== undefined && !isSecretField(k))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([k, x]) => [k, canonical(x)]),
      );
    }
    return v;
  };
  return JSON.stringify(canonical(value)) ?? 'null';
}

/**
 * The stored fingerprint of a request: an HMAC under a server secret, so a stored row does not let
 * anyone test guesses of the input offline (a bare hash of a 4-digit PIN falls in 10⁴ tries).
 */
export function fingerprintOf(key: Buffer, value: unknown): string {
  return createHmac('sha256', key).update(canonicalInput(value)).digest('hex');
}

/**
 * `Idempotency-Key` as DESIGN §4 (IETF draft semantics), for every money-moving operation. A key
 * is claimed with a lease before the work starts; the work finishes it, with the response to
 * replay, in the same transaction as its effect. A repeat with the same input replays that
 * response (an error included); with other input it is 422; while the first still runs, 409. A
 * claim whose lease ran out (its process died) passes to the next request, which resumes from
 * the record the first one attached instead of doing the work again.
 */
export class Idempotency {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    /** The HMAC key of request fingerprints (config: IDEMPOTENCY_SECRET, or derived from SECRETS_KEY). */
    private readonly fingerprintKey: Buffer,
    /**
     * How long a claim stays `running` before the next request may take it over (config:
     * IDEMPOTENCY_LEASE_MS): this class's own claims, and the lease every operation with a provider
     * call records across that call (lifecycle/keyed.ts, the bill and deposit statements).
     */
    readonly leaseMs = 60_000,
  ) {}

  /** The keyed fingerprint of a request's input (for stores that keep their own keys, like offramp orders). */
  fingerprint(input: unknown): string {
    return fingerprintOf(this.fingerprintKey, input);
  }

  /**
   * Runs `work` once per key. Without a key it simply runs. `work` receives the claim (null
   * without a key) and calls `finish` in the transaction that commits its effect; whatever it
   * returns is stored as the answer if it did not.
   */
  async run<T>(
    scope: IdempotencyScope,
    key: string | undefined,
    input: unknown,
    work: (claim: Claim | null) => Promise<T>,
  ): Promise<T> {
    if (key === undefined) return work(null);
    checkKey(key);
    const requestHash = this.fingerprint(input);
    const outcome = await this.claim(scope, key, requestHash);
    if ('replay' in outcome) return replay<T>(outcome.replay);
    let result: T;
    try {
      result = await work(outcome.claim);
    } catch (error) {
      // A refusal is the answer to this key from now on; anything unexpected (a lost database
      // connection included) gives the key back at once, so a retry need not wait out the lease.
      if (isRefusal(error)) {
        await this.store(scope, key, storedRefusal(error)).catch(() => this.release(scope, key));
      } else {
        await this.release(scope, key);
      }
      throw error;
    }
    // Work that finished its key in its own transaction (the rule) makes this a no-op; work with
    // no effect to commit it with still leaves an answer to replay. The work has happened: a
    // failure here must never give the key back (a retry would repeat the effect), so the key keeps
    // its lease and the answer is stored in the background; until then a retry is told to wait.
    await this.store(scope, key, { result: toStorable(result) }).catch(() =>
      this.keepTrying(() => this.store(scope, key, { result: toStorable(result) })),
    );
    return result;
  }

  /**
   * The one-commit shape: claims the key inside `work`'s own transaction (see money/key-claim.ts),
   * runs `work`, and stores its answer in that same transaction, so the key is `done` exactly when
   * the effect commits. A replay answers without `work`; a concurrent request with the same key
   * gets 409; a refusal `work` throws is stored (after the rollback) and replayed from then on.
   * With `waitForTwin`, a concurrent request with the same key waits for its twin's commit instead
   * of 409, and then replays its answer (`awaitKey`).
   */
  async transaction<T>(
    scope: IdempotencyScope,
    key: string | undefined,
    input: unknown,
    work: (tx: Tx) => Promise<T>,
    options: { waitForTwin?: boolean } = {},
  ): Promise<T> {
    if (key === undefined) return this.db.transaction(work);
    checkKey(key);
    const ref: KeyRef = { scope, key, requestHash: this.fingerprint(input) };
    let claimed = false;
    try {
      return await retryOnKeyRace(() => {
        claimed = false;
        return this.db.transaction(async (tx) => {
          if (options.waitForTwin) await awaitKey(tx, ref);
          const claim = await claimKey(tx, ref, this.clock.now());
          if ('replay' in claim) return replay<T>(claim.replay);
          // A key left `running` by a two-commit operation belongs to that operation, not this one;
          // one left with no record by a process that died (its lease lapsed) is claimed afresh.
          if ('resume' in claim && (claim.resume !== null || !(await dropLapsedKey(tx, ref, this.clock.now()))))
            throw keyBusy();
          claimed = true;
          const result = await work(tx);
          await answerKey(tx, ref, { result: toStorable(result) });
          return result;
        });
      });
    } catch (error) {
      if (claimed && isRefusal(error)) return this.refuse<T>(ref, error);
      throw error;
    }
  }

  /** The key of a request that sent one (checked and fingerprinted), for stores that claim it themselves. */
  keyRef(scope: IdempotencyScope, key: string | undefined, input: unknown): KeyRef | undefined {
    if (key === undefined) return undefined;
    checkKey(key);
    return { scope, key, requestHash: this.fingerprint(input) };
  }

  /**
   * Answers a refused request: stores the refusal as its key's answer and throws it, or replays the
   * answer the key already had (a concurrent retry's).
   */
  async refuse<T>(ref: KeyRef | undefined, error: DomainError): Promise<T> {
    const prior = ref ? await refuseKey(this.db, ref, error, this.clock.now()) : undefined;
    if (prior) return replay<T>(prior);
    throw error;
  }

  /**
   * Gives back a key whose work failed before it recorded anything, so a retry runs afresh. Only a
   * key still `running` with no record attached is removed: if the work's transaction did commit
   * (a connection lost during COMMIT), its key is `done` and stays; a key with a record attached
   * keeps its lease and the next request resumes from that record once it ends (the crash path).
   * When the database cannot be reached (the usual reason the work failed), this keeps trying in
   * the background for as long as the lease would have lasted.
   */
  private async release(scope: IdempotencyScope, key: string): Promise<void> {
    const attempt = async () => {
      await this.db
        .delete(idempotencyKeys)
        .where(and(this.where(scope, key), eq(idempotencyKeys.status, 'running'), isNull(idempotencyKeys.resourceId)));
    };
    await attempt().catch(() => this.keepTrying(attempt));
  }

  /** Retries a write the database refused (usually: unreachable) in the background, for as long as a lease lasts. */
  private keepTrying(attempt: () => Promise<unknown>): void {
    const giveUpAt = Date.now() + this.leaseMs;
    // After the request has answered: in no trace, not in the request's.
    const retry = detachedFromTraces(() => {
      attempt().catch(() => {
        if (Date.now() < giveUpAt) setTimeout(retry, RELEASE_RETRY_MS).unref();
      });
    });
    setTimeout(retry, RELEASE_RETRY_MS).unref();
  }

  /** Records the record this work created, in the transaction that creates it. */
  async attach(tx: Executor, claim: Claim | null, resourceId: string): Promise<void> {
    if (!claim) return;
    await tx.update(idempotencyKeys).set({ resourceId }).where(this.where(claim.scope, claim.key));
  }

  /** Marks the key done with the response to replay, in the transaction that commits the effect. */
  async finish(tx: Executor, claim: Claim | null, result: unknown): Promise<void> {
    if (!claim) return;
    await tx
      .update(idempotencyKeys)
      .set({ status: 'done', response: { result: toStorable(result) } as Stored, lockedUntil: null })
      .where(this.where(claim.scope, claim.key));
  }

  private async claim(
    scope: IdempotencyScope,
    key: string,
    requestHash: string,
  ): Promise<{ claim: Claim } | { replay: Stored }> {
    const now = this.clock.now();
    const lockedUntil = new Date(now.getTime() + this.leaseMs);
    const [inserted] = await this.db
      .insert(idempotencyKeys)
      .values({ ...scope, key, requestHash, status: 'running', lockedUntil })
      .onConflictDoNothing()
      .returning();
    if (inserted) return { claim: { scope, key, resourceId: null } };
    const [existing] = await this.db.select().from(idempotencyKeys).where(this.where(scope, key));
    if (!existing) return this.claim(scope, key, requestHash);
    if (existing.requestHash !== requestHash) throw keyReused();
    if (existing.status === 'done') return { replay: existing.response as Stored };
    // Still running: a live lease means the first request is in progress; an expired one, that it died.
    const [taken] = await this.db
      .update(idempotencyKeys)
      .set({ lockedUntil })
      .where(
        and(
          this.where(scope, key),
          eq(idempotencyKeys.status, 'running'),
          or(isNull(idempotencyKeys.lockedUntil), lt(idempotencyKeys.lockedUntil, now)),
        ),
      )
      .returning();
    if (!taken) throw keyBusy();
    return { claim: { scope, key, resourceId: taken.resourceId } };
  }

  private async store(scope: IdempotencyScope, key: string, response: Stored): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ status: 'done', response, lockedUntil: null })
      .where(and(this.where(scope, key), eq(idempotencyKeys.status, 'running')));
  }

  private where(scope: IdempotencyScope, key: string) {
    return and(
      eq(idempotencyKeys.userId, scope.userId),
      eq(idempotencyKeys.environment, scope.environment),
      eq(idempotencyKeys.operation, scope.operation),
      eq(idempotencyKeys.key, key),
    );
  }
}

/** An over-long key is the client's mistake, answered before anything is claimed. */
function checkKey(key: string): void {
  if (key.length > MAX_KEY_LENGTH)
    throw new DomainError(
      'BAD_USER_INPUT',
      `The Idempotency-Key header must be at most ${MAX_KEY_LENGTH} characters.`,
      { field: 'Idempotency-Key' },
    );
}

/** The stored answer of a key, as the original request returned or threw it. */
export function replay<T>(stored: Stored): T {
  if ('error' in stored) {
    const { code, message, ...options } = stored.error;
    throw new DomainError(code, message, options);
  }
  return revive(stored.result) as T;
}

/** Results are stored as JSON: bigints as {"$bigint": "…"} and dates as {"$date": "…"}, revived on replay. */
export function toStorable(value: unknown): unknown {
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (value instanceof Date) return { $date: value.toISOString() };
  if (Array.isArray(value)) return value.map(toStorable);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toStorable(v)]));
  return value;
}

function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record['$bigint'] === 'string') return BigInt(record['$bigint']);
    if (typeof record['$date'] === 'string') return new Date(record['$date']);
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, revive(v)]));
  }
  return value;
}
