import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { facadeKeys } from '../../db/facade-keys-schema.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import type { Idempotency, IdempotencyScope } from '../idempotency/idempotency.js';
import { replay, toStorable } from '../idempotency/idempotency.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { isRefusal, keyBusy, keyReused, type Stored, storedRefusal } from '../money/key-claim.js';
import type { Caller, CallerCredential } from '../users/user-directory.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { UpstreamFaultError } from './upstream-outcomes.js';
import type { KeyedMutation } from './upstream-routes.js';

/** The job kind of the matcher (key-matcher.ts). */
export const MATCH_JOB = 'facade.match';

/** What the matcher looks for upstream: a bill payment's fields, and its reference when the request carried one. */
export interface MatchHint {
  kind: 'bill';
  type: string;
  customer: string;
  /** Kobo, as text (JSON has no bigint). */
  amountKobo: string | null;
  reference: string | null;
}

/**
 * The first of a send's fields (type, customer, amount) a bill record differs in, with both
 * values; undefined when the record could be the send's. A send whose amount is not known is not
 * compared by amount.
 */
export function billMismatch(
  hint: MatchHint,
  record: { type: string; customer: string; amount: bigint },
): { field: 'type' | 'customer' | 'amount'; send: string; record: string } | undefined {
  if (record.type !== hint.type) return { field: 'type', send: hint.type, record: record.type };
  if (record.customer !== hint.customer) return { field: 'customer', send: hint.customer, record: record.customer };
  if (hint.amountKobo !== null && record.amount !== BigInt(hint.amountKobo))
    return { field: 'amount', send: `${hint.amountKobo} kobo`, record: `${record.amount} kobo` };
  return undefined;
}

export interface KeyedSend<T> {
  operation: KeyedMutation;
  key: string | undefined;
  /** What the fingerprint is taken of (secrets left out by `canonicalInput`). */
  input: unknown;
  match?: MatchHint | undefined;
  /** The upstream record an answer is (a bill's reference): no other key's matcher may take it. */
  referenceOf?: ((result: T) => string) | undefined;
  /** Sends the request once, with the Idempotency-Key given (the caller's). */
  send: (idempotencyKey: string | undefined) => Promise<T>;
}

export interface FacadeKeySettings {
  /** Routes whose upstream honours Idempotency-Key (upstream-routes.ts keyedRoutesOf). */
  keyed: ReadonlySet<KeyedMutation>;
  /** How long a send may stay in flight before its process is taken for dead: past the upstream deadline. */
  leaseMs: number;
  /** When the matcher first looks, after a send's outcome became unknown. */
  matchEveryMs: number;
}

/** A retry of a mutation whose outcome the facade does not know, on a route whose upstream ignores keys. */
export const outcomeUnknown = () =>
  new DomainError(
    'CONFLICT',
    'The outcome of the request with this Idempotency-Key is not known yet: the upstream did not answer it in time, and it is not sent again. Retry later with the same key; do not use a new one.',
    { field: 'Idempotency-Key' },
  );

/**
 * Idempotency a facade owns for its GraphQL mutations (docs/facade.md#idempotency-of-mutations):
 * one row per key (facade-keys-schema.ts) with the input's fingerprint and the answer every retry
 * replays. Another input with the same key is 422, a retry while the first is in flight 409.
 *
 * A send whose answer did not come (timeout, 5xx, a shape the spec does not give) may have taken
 * effect upstream: its record becomes `unknown` and the facade never sends it on its own again.
 * Where the route's upstream honours Idempotency-Key, a caller's retry is forwarded with the same
 * key (the upstream replays); elsewhere a retry is 409 until the matcher (key-matcher.ts) or an
 * operator resolves the record. The caller's credential is kept, sealed, while it is unknown: the
 * matcher asks the upstream with it.
 */
export class FacadeKeys {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly secrets: SecretBox,
    private readonly settings: FacadeKeySettings,
  ) {}

  async run<T>(caller: Caller, m: KeyedSend<T>): Promise<T> {
    if (m.key === undefined) return m.send(undefined);
    const scope: IdempotencyScope = {
      userId: caller.principal.userId,
      environment: caller.principal.environment,
      operation: m.operation,
    };
    // Checks the key's length and takes the keyed fingerprint, as service mode does.
    const { requestHash } = this.idempotency.keyRef(scope, m.key, m.input)!;
    const keyed = this.settings.keyed.has(m.operation);
    const now = this.clock.now();
    const [inserted] = await this.db
      .insert(facadeKeys)
      .values({
        ...scope,
        key: m.key,
        requestHash,
        state: 'in_flight',
        keyed,
        match: m.match ?? null,
        sentAt: now,
        leaseUntil: this.leaseFrom(now),
      })
      .onConflictDoNothing()
      .returning({ id: facadeKeys.id });
    if (inserted) return this.send(inserted.id, caller, m, 'upstream');

    const [existing] = await this.db.select().from(facadeKeys).where(whereKey(scope, m.key));
    if (!existing) throw keyBusy();
    if (existing.requestHash !== requestHash) throw keyReused();
    if (existing.state === 'succeeded' || existing.state === 'failed') return replay<T>(existing.answer as Stored);
    if (existing.state === 'in_flight' && existing.leaseUntil && existing.leaseUntil > now) throw keyBusy();
    // In flight past its lease: the process that sent it died waiting; what it did upstream is unknown.
    if (existing.state === 'in_flight') await this.becomeUnknown(existing.id, caller, 'in_flight');
    // Re-sent only where the upstream honours the key now too: a route the settings no longer list
    // could run the operation a second time.
    if (!existing.keyed || !this.settings.keyed.has(m.operation)) throw outcomeUnknown();
    // The upstream honours the key: the caller's retry goes to it with the same key, and it replays.
    const [taken] = await this.db
      .update(facadeKeys)
      .set({ state: 'in_flight', leaseUntil: this.leaseFrom(now), updatedAt: now })
      .where(and(eq(facadeKeys.id, existing.id), eq(facadeKeys.state, 'unknown')))
      .returning({ id: facadeKeys.id });
    if (!taken) throw keyBusy();
    return this.send(existing.id, caller, m, 'retry');
  }

  private async send<T>(id: string, caller: Caller, m: KeyedSend<T>, by: 'upstream' | 'retry'): Promise<T> {
    let result: T;
    try {
      result = await m.send(m.key);
    } catch (error) {
      await (by === 'retry' ? this.afterRetryFailure(id, caller, error) : this.afterFailure(id, caller, error));
      throw error;
    }
    const reference = m.referenceOf?.(result);
    // Settled from `unknown` too: a send slower than its lease, turned unknown by a retry meanwhile,
    // still brings the answer. The reference is unique per owner: an upstream that answered two
    // keys with one record keeps the answer, without the reference.
    const answered = { result: toStorable(result) };
    await this.resolve(id, SENDING, answered, 'succeeded', by, reference).catch(() =>
      this.resolve(id, SENDING, answered, 'succeeded', by),
    );
    return result;
  }

  /**
   * A retry of an unknown outcome, forwarded with the same key, that did not answer: the first
   * send's outcome is still what is unknown. Only a refusal the upstream's key replay stands behind
   * settles it; "still processing" (409), "another input" (422), "later", "not sent", a 401 or a
   * fault leave it unknown, for the next retry, the matcher or an operator (never deleted: it may
   * have been taken).
   */
  private async afterRetryFailure(id: string, caller: Caller, error: unknown): Promise<void> {
    const undecided =
      !isRefusal(error) ||
      error instanceof UpstreamFaultError ||
      ['CONFLICT', 'IDEMPOTENCY_KEY_REUSED', 'UNAUTHENTICATED', 'RATE_LIMITED'].includes(error.code);
    if (!undecided) return this.resolve(id, 'in_flight', storedRefusal(error), 'failed', 'upstream');
    await this.becomeUnknown(id, caller, 'in_flight');
  }

  /** A refusal is the key's answer; "later" or "not sent" gives the key back; anything else is unknown. */
  private async afterFailure(id: string, caller: Caller, error: unknown): Promise<void> {
    if (isRefusal(error) && !(error instanceof UpstreamFaultError)) {
      // An upstream 401 means the credential acts for nobody now: nothing was done, the key is free.
      if (error.code === 'UNAUTHENTICATED') return this.release(id);
      return this.resolve(id, 'in_flight', storedRefusal(error), 'failed', 'upstream');
    }
    if (error instanceof DomainError && error.code === 'RATE_LIMITED') return this.release(id);
    if (error instanceof UpstreamFaultError && error.fault === 'unreachable' && neverConnected(error))
      return this.release(id);
    await this.becomeUnknown(id, caller, 'in_flight');
  }

  /** The record becomes `unknown`, with the caller's credential sealed for the matcher, which is enqueued with it. */
  private async becomeUnknown(id: string, caller: Caller, from: 'in_flight'): Promise<void> {
    const now = this.clock.now();
    const credential = caller.credential
      ? this.secrets.seal(JSON.stringify(sealable(caller.credential)), bindingOf(id))
      : null;
    await this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(facadeKeys)
        .set({ state: 'unknown', leaseUntil: null, credentialSealed: credential, updatedAt: now })
        .where(and(eq(facadeKeys.id, id), eq(facadeKeys.state, from)))
        .returning({ userId: facadeKeys.userId });
      if (!row) return;
      await enqueueJob(tx, {
        kind: MATCH_JOB,
        payload: { id },
        runAt: new Date(now.getTime() + this.settings.matchEveryMs),
        tenant: row.userId,
      });
    });
  }

  private async release(id: string): Promise<void> {
    await this.db.delete(facadeKeys).where(and(eq(facadeKeys.id, id), eq(facadeKeys.state, 'in_flight')));
  }

  /** Settles a record from `from` with its answer, and forgets the credential. */
  private async resolve(
    id: string,
    from: 'in_flight' | 'unknown' | typeof SENDING,
    answer: Stored,
    state: 'succeeded' | 'failed',
    by: string,
    matchedReference?: string,
  ): Promise<void> {
    const now = this.clock.now();
    await this.db
      .update(facadeKeys)
      .set({
        state,
        answer,
        leaseUntil: null,
        credentialSealed: null,
        resolvedAt: now,
        resolvedBy: by,
        ...(matchedReference !== undefined ? { matchedReference } : {}),
        updatedAt: now,
      })
      .where(
        and(
          eq(facadeKeys.id, id),
          typeof from === 'string' ? eq(facadeKeys.state, from) : inArray(facadeKeys.state, [...from]),
        ),
      );
  }

  /**
   * Settles a record whose outcome was unknown (the matcher, an operator), with the answer every
   * retry replays from now on; false when it was no longer unknown (settled meanwhile).
   */
  async settle(
    id: string,
    outcome: {
      state: 'succeeded' | 'failed';
      answer: Stored;
      by: 'matcher' | 'operator';
      note?: string | undefined;
      matchedReference?: string | undefined;
    },
  ): Promise<boolean> {
    const now = this.clock.now();
    const rows = await this.db
      .update(facadeKeys)
      .set({
        state: outcome.state,
        answer: outcome.answer,
        credentialSealed: null,
        resolvedAt: now,
        resolvedBy: outcome.by,
        resolutionNote: outcome.note ?? null,
        matchedReference: outcome.matchedReference ?? null,
        updatedAt: now,
      })
      .where(and(eq(facadeKeys.id, id), eq(facadeKeys.state, 'unknown')))
      .returning({ id: facadeKeys.id });
    return rows.length > 0;
  }

  /** The sealed credential of an unknown record, for the matcher and the operator's resolution. */
  credentialOf(id: string, sealed: string | null): CallerCredential | undefined {
    if (!sealed) return undefined;
    return JSON.parse(this.secrets.open(sealed, bindingOf(id))) as CallerCredential;
  }

  private leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.settings.leaseMs);
  }
}

/** The states a send's own answer settles from: its own, or `unknown` when a retry found it past its lease. */
const SENDING = ['in_flight', 'unknown'] as const;

/** What of a credential is kept: the credential itself, never the request's allowance it travelled with. */
const sealable = ({ value, scheme, clientIp }: CallerCredential): CallerCredential => ({
  value,
  scheme,
  ...(clientIp !== undefined ? { clientIp } : {}),
});

/** The sealed credential is bound to its row: copied onto another row, it does not open. */
const bindingOf = (id: string) => `facade_keys:${id}`;

/** A connection refused or a name that did not resolve: the request never left the facade. */
function neverConnected(error: UpstreamFaultError): boolean {
  let cause: unknown = error.cause;
  for (let depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

function whereKey(scope: IdempotencyScope, key: string) {
  return and(
    eq(facadeKeys.userId, scope.userId),
    eq(facadeKeys.environment, scope.environment),
    eq(facadeKeys.operation, scope.operation),
    eq(facadeKeys.key, key),
  );
}
