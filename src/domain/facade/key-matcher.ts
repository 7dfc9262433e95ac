import { and, eq, gt, inArray, isNotNull, lt, ne, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { facadeKeys } from '../../db/facade-keys-schema.js';
import type { BillRecord } from '../bills/bill-record.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../ids.js';
import { toStorable } from '../idempotency/idempotency.js';
import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import type { CallerCredential } from '../users/user-directory.js';
import { billMismatch, type FacadeKeys, MATCH_JOB, type MatchHint } from './facade-keys.js';
import type { UpstreamBills } from './upstream-bills.js';

/** A record made upstream this long before the facade sent its request still counts (clocks differ). */
const CLOCK_SKEW_MS = 5 * 60_000;
/** Records read per page, and pages read per look: the payment is among the newest. */
const PAGE_SIZE = 50;
const MAX_PAGES = 4;
/** How far back a reference another key settled on is remembered as taken: far past any window. */
const TAKEN_FOR_MS = 30 * 24 * 3600_000;

export interface MatcherSettings {
  /** UPSTREAM_MATCH_EVERY_MS: between two looks. */
  everyMs: number;
  /** UPSTREAM_MATCH_WINDOW_MS: from the send until the record goes to the operator queue. */
  windowMs: number;
}

type Look = { found: BillRecord } | { notFound: string };

/**
 * The matcher (job `facade.match`): for a mutation whose outcome is unknown (facade-keys.ts), it
 * looks in the upstream's own records, asked with the caller's sealed credential, and settles
 * the record with what it finds: the bill record by the request's reference when it carried one,
 * else the one bill record of the caller's made since the send with the same type, customer and
 * amount that no other key has taken. The record's status decides `succeeded` (PENDING, SUCCESS)
 * or `failed` (FAILED); either way the record is the answer retries replay. What it cannot settle
 * within the window goes to the operator queue (operator-queue.ts). It never sends the mutation.
 */
export class KeyMatcher implements JobHandler {
  readonly kind = MATCH_JOB;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly keys: FacadeKeys,
    private readonly bills: UpstreamBills,
    private readonly settings: MatcherSettings,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const id = String(job.payload['id'] ?? '');
    if (!isUuid(id)) return { status: 'failed', error: 'the job names no record' };
    const [row] = await this.db.select().from(facadeKeys).where(eq(facadeKeys.id, id));
    if (row?.state !== 'unknown' || row.queuedAt) return { status: 'done' };
    const look = await this.look(row);
    if ('found' in look) {
      await this.keys.settle(row.id, {
        state: look.found.status === 'FAILED' ? 'failed' : 'succeeded',
        answer: { result: toStorable(look.found) },
        by: 'matcher',
        note: `found upstream as ${look.found.reference}`,
        matchedReference: look.found.reference,
      });
      return { status: 'done' };
    }
    const now = this.clock.now();
    if (now.getTime() - row.sentAt.getTime() >= this.settings.windowMs) {
      await this.db
        .update(facadeKeys)
        .set({ queuedAt: now, resolutionNote: look.notFound, updatedAt: now })
        .where(and(eq(facadeKeys.id, row.id), eq(facadeKeys.state, 'unknown')));
      return { status: 'done' };
    }
    return { status: 'retry', at: new Date(now.getTime() + this.settings.everyMs), error: look.notFound };
  }

  /** One look upstream; a fault or refusal there is "not found this time", named for the operator. */
  async look(row: typeof facadeKeys.$inferSelect): Promise<Look> {
    const { id, userId, environment, sentAt } = row;
    const hint = row.match as MatchHint | null;
    const sealed = row.credentialSealed;
    if (hint?.kind !== 'bill') return { notFound: 'no upstream records to look in for this operation' };
    const credential = this.keys.credentialOf(id, sealed);
    if (!credential) return { notFound: 'no credential kept to ask the upstream with' };
    try {
      if (hint.reference) return await this.byReference(credential, hint.reference);
      // Matching by fields picks the one record that fits. It cannot tell two sends alike apart:
      // with no amount to match by, or another send of the owner with the same fields not settled
      // yet, the record found may be the other's, so an operator chooses.
      if (hint.amountKobo === null) return { notFound: 'no amount to match by; an operator must choose' };
      const alike = await this.unsettledAlike(row, hint);
      if (alike > 0)
        return {
          notFound: `${alike} other send(s) with the same type, customer and amount are not settled; an operator must choose`,
        };
      const taken = await this.takenReferences(userId, environment);
      return await this.byFields(credential, hint, sentAt, taken);
    } catch (error) {
      const code = error instanceof DomainError ? error.code : 'INTERNAL_SERVER_ERROR';
      return { notFound: `the upstream could not be read (${code})` };
    }
  }

  private async byReference(credential: CallerCredential, reference: string): Promise<Look> {
    try {
      return { found: await this.bills.recordWith(credential, reference) };
    } catch (error) {
      if (error instanceof DomainError && error.code === 'BILL_NOT_FOUND')
        return { notFound: `no bill record ${reference} upstream` };
      throw error;
    }
  }

  private async byFields(
    credential: CallerCredential,
    hint: MatchHint,
    sentAt: Date,
    taken: ReadonlySet<string>,
  ): Promise<Look> {
    const since = sentAt.getTime() - CLOCK_SKEW_MS;
    const candidates: BillRecord[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      // The filter narrows the list on an upstream that reads these names (a Partner Gateway);
      // every record is checked here too, since the spec names the list's parameters by meaning only.
      const { bills, hasNext } = await this.bills.recordsWith(
        credential,
        { type: hint.type as BillRecord['type'], customer: hint.customer, sortBy: 'createdAt', sortOrder: 'DESC' },
        page,
        PAGE_SIZE,
      );
      for (const record of bills)
        if (record.createdAt.getTime() >= since && !billMismatch(hint, record) && !taken.has(record.reference))
          candidates.push(record);
      const oldest = bills.at(-1)?.createdAt.getTime();
      if (!hasNext || oldest === undefined || oldest < since) break;
    }
    if (candidates.length === 1) return { found: candidates[0]! };
    if (candidates.length === 0) return { notFound: 'no matching bill record upstream yet' };
    return { notFound: `${candidates.length} bill records upstream match; an operator must choose` };
  }

  /** The owner's other sends with the same bill fields, in flight or unknown, sent within the skew of this one. */
  private async unsettledAlike(row: typeof facadeKeys.$inferSelect, hint: MatchHint): Promise<number> {
    const [counted] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(facadeKeys)
      .where(
        and(
          eq(facadeKeys.userId, row.userId),
          eq(facadeKeys.environment, row.environment),
          ne(facadeKeys.id, row.id),
          inArray(facadeKeys.state, ['in_flight', 'unknown']),
          sql`${facadeKeys.match}->>'type' = ${hint.type}`,
          sql`${facadeKeys.match}->>'customer' = ${hint.customer}`,
          sql`${facadeKeys.match}->>'amountKobo' = ${hint.amountKobo}`,
          gt(facadeKeys.sentAt, new Date(row.sentAt.getTime() - CLOCK_SKEW_MS)),
          lt(facadeKeys.sentAt, new Date(row.sentAt.getTime() + CLOCK_SKEW_MS)),
        ),
      );
    return counted?.n ?? 0;
  }

  /** References other keys of the owner already settled on: one upstream record answers one key. */
  private async takenReferences(userId: string, environment: 'sandbox' | 'production'): Promise<Set<string>> {
    const rows = await this.db
      .select({ reference: facadeKeys.matchedReference })
      .from(facadeKeys)
      .where(
        and(
          eq(facadeKeys.userId, userId),
          eq(facadeKeys.environment, environment),
          isNotNull(facadeKeys.matchedReference),
          gt(facadeKeys.sentAt, new Date(this.clock.now().getTime() - TAKEN_FOR_MS)),
        ),
      );
    return new Set(rows.map((r) => r.reference!));
  }
}
