import { createHash } from 'node:crypto';
import type { BillRecord } from '../bills/bill-record.js';
import type { BillsDomain } from '../bills/bills-domain.js';
import type { Caller } from '../users/user-directory.js';
import { nairaNumber } from '../wallet/naira.js';
import type { ChangeSource } from './gap-fill.js';
import type { InboundEnvelope } from './inbound-envelope.js';

/** Records per page asked; the job reads pages until one starts before the window. */
const PAGE_SIZE = 100;
/** At most this many pages a run: 5,000 records created in the window. Past it, the next run goes no deeper. */
const MAX_PAGES = 50;

/** The kind a bill record's status implies: the spec's `bill.payment.successful`, and this gateway's failed twin. */
const KIND_OF: Partial<Record<BillRecord['status'], string>> = {
  SUCCESS: 'bill.payment.successful',
  FAILED: 'bill.payment.failed',
};

/**
 * The id the gap-filling job gives the event it found: the same for a record's kind on every run
 * and instance, so it is written once (the upstream's own id for it is not known here).
 */
export function gapFillId(kind: string, reference: string): string {
  return `gapfill_${createHash('sha256').update(`${kind}\0${reference}`).digest('hex').slice(0, 32)}`;
}

/**
 * The spec's bill records list (`GET /api/v1/bills/records`, newest created first) as a source of
 * the gap-filling job: each record created in the window whose status is final implies its event.
 * The event's `data` is what the record shows of the spec's bill group: `reference`, `status`,
 * `amount` (naira, as the record gives it), `currency` (bills are in naira), `billerName`,
 * `customerId` (the record's `customer`); and its `updatedAt`. `customerName` is not in the
 * record, so it is absent. `created` is the record's `updatedAt`, when its status was last set.
 */
export class BillRecordChanges implements ChangeSource {
  readonly name = 'bill records';

  constructor(
    private readonly bills: BillsDomain,
    private readonly now: () => Date,
  ) {}

  async changes(caller: Caller, since: Date, signal: AbortSignal): Promise<InboundEnvelope[]> {
    const found: InboundEnvelope[] = [];
    for (let page = 1; page <= MAX_PAGES && !signal.aborted; page++) {
      const answer = await this.bills.records(caller, { sortBy: 'createdAt', sortOrder: 'DESC' }, page, PAGE_SIZE);
      for (const record of answer.bills) {
        if (record.createdAt < since) return found;
        const envelope = this.eventOf(record, since);
        if (envelope) found.push(envelope);
      }
      if (!answer.hasNext) break;
    }
    return found;
  }

  private eventOf(record: BillRecord, since: Date): InboundEnvelope | undefined {
    const kind = KIND_OF[record.status];
    if (!kind) return undefined;
    const changed = record.updatedAt ?? record.createdAt;
    // A record's change is no later than now, and no earlier than the oldest event a facade takes.
    const created = new Date(Math.max(since.getTime(), Math.min(changed.getTime(), this.now().getTime())));
    return {
      id: gapFillId(kind, record.reference),
      type: kind,
      created,
      data: {
        reference: record.reference,
        status: record.status,
        amount: nairaNumber(record.amount),
        currency: 'NGN',
        billerName: record.billerName,
        customerId: record.customer,
        ...(record.updatedAt ? { updatedAt: record.updatedAt.toISOString() } : {}),
      },
    };
  }
}
