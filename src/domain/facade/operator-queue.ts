import { and, asc, count, eq, isNotNull, min } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { facadeKeys } from '../../db/facade-keys-schema.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../ids.js';
import { toStorable } from '../idempotency/idempotency.js';
import { storedRefusal } from '../money/key-claim.js';
import { billMismatch, type FacadeKeys, type MatchHint } from './facade-keys.js';
import type { UpstreamBills } from './upstream-bills.js';

/** One mutation whose outcome is unknown, as the operator sees it (never the credential). */
export interface UnknownOutcome {
  id: string;
  userId: string;
  environment: string;
  operation: string;
  key: string;
  sentAt: Date;
  ageSeconds: number;
  /** When the matcher gave up; null while it still looks. */
  queuedAt: Date | null;
  /** What the matcher looks for: a bill's type, customer, amount (kobo) and reference. */
  match: MatchHint | null;
  /** Why the matcher could not settle it, at its last look. */
  lastLook: string | null;
}

export type Resolution = { reference: string; note: string } | { failed: true; note: string };

/** The answer a retry gets once an operator found that the upstream never took the request. */
export const notTakenUpstream = () =>
  new DomainError(
    'CONFLICT',
    'The upstream did not take the request sent with this Idempotency-Key (an operator checked its records). Send it again with a new key.',
    { field: 'Idempotency-Key' },
  );

/**
 * The operator queue of a facade: mutations whose outcome stayed unknown past the matcher's window
 * (key-matcher.ts). The operator looks at the upstream (its dashboard, its support) and settles
 * each one: with the upstream record that is the payment (read by reference with the caller's
 * sealed credential, so a retry replays that record), or as not taken upstream (a retry is told
 * to use a new key). Listed by `npm run admin -- facade-unknowns` and the operator page.
 */
export class UnknownOutcomes {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly keys: FacadeKeys,
    private readonly bills: UpstreamBills,
  ) {}

  /** The queue, oldest first; with `all`, also the records the matcher is still looking for. */
  async list(options: { all?: boolean; limit?: number } = {}): Promise<UnknownOutcome[]> {
    const now = this.clock.now();
    const rows = await this.db
      .select()
      .from(facadeKeys)
      .where(and(eq(facadeKeys.state, 'unknown'), options.all ? undefined : isNotNull(facadeKeys.queuedAt)))
      .orderBy(asc(facadeKeys.sentAt))
      .limit(options.limit ?? 100);
    return rows.map((row) => ({
      id: row.id,
      userId: row.userId,
      environment: row.environment,
      operation: row.operation,
      key: row.key,
      sentAt: row.sentAt,
      ageSeconds: Math.max(0, Math.floor((now.getTime() - row.sentAt.getTime()) / 1000)),
      queuedAt: row.queuedAt,
      match: row.match as MatchHint | null,
      lastLook: row.resolutionNote,
    }));
  }

  /** Age of the oldest record in the queue, in seconds (0 when it is empty), and how many it holds. */
  async oldest(): Promise<{ count: number; oldestSeconds: number }> {
    const [row] = await this.db
      .select({ count: count(), oldest: min(facadeKeys.sentAt) })
      .from(facadeKeys)
      .where(and(eq(facadeKeys.state, 'unknown'), isNotNull(facadeKeys.queuedAt)));
    const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
    const now = this.clock.now().getTime();
    return {
      count: Number(row?.count ?? 0),
      oldestSeconds: oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1000),
    };
  }

  async resolve(id: string, resolution: Resolution): Promise<{ id: string; state: 'succeeded' | 'failed' }> {
    const [row] = isUuid(id) ? await this.db.select().from(facadeKeys).where(eq(facadeKeys.id, id)) : [];
    if (row?.state !== 'unknown')
      throw new DomainError('NOT_FOUND', `No mutation of unknown outcome ${id} (settled already, or never one).`);
    if ('failed' in resolution) {
      await this.settled(
        await this.keys.settle(id, {
          state: 'failed',
          answer: storedRefusal(notTakenUpstream()),
          by: 'operator',
          note: resolution.note,
        }),
        id,
      );
      return { id, state: 'failed' };
    }
    const hint = row.match as MatchHint | null;
    if (hint?.kind !== 'bill')
      throw new DomainError('BAD_USER_INPUT', 'Only a bill payment is settled with an upstream reference.', {
        field: 'reference',
      });
    const credential = this.keys.credentialOf(id, row.credentialSealed);
    if (!credential)
      throw new DomainError('BAD_USER_INPUT', 'No credential is kept for this record to read the upstream with.', {
        field: 'reference',
      });
    const record = await this.bills.recordWith(credential, resolution.reference);
    // A reference mistyped or of another payment would settle this send with that one's answer.
    const mismatch = billMismatch(hint, record);
    if (mismatch)
      throw new DomainError(
        'BAD_USER_INPUT',
        `Upstream bill ${record.reference} is not this send's: its ${mismatch.field} is ${mismatch.record}, the send's ${mismatch.send}. Nothing was settled.`,
        { field: 'reference' },
      );
    const state = record.status === 'FAILED' ? 'failed' : 'succeeded';
    await this.settled(
      await this.keys.settle(id, {
        state,
        answer: { result: toStorable(record) },
        by: 'operator',
        note: resolution.note,
        matchedReference: record.reference,
      }),
      id,
    );
    return { id, state };
  }

  private async settled(done: boolean, id: string): Promise<void> {
    if (!done) throw new DomainError('NOT_FOUND', `No mutation of unknown outcome ${id} (settled meanwhile).`);
  }
}
