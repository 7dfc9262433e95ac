import { metrics } from './metrics.js';

/** What the relay reads back from each event it stamps (no user, reference or address). */
export interface StampedEvent {
  type: string;
  kind: string | null;
  status: string | null;
  currency: string | null;
  amount: string | null;
}

const KIND = /^[A-Z_]{1,32}$/;

/**
 * Money operations are counted from the outbox as the relay stamps it: an event commits with the
 * change it describes, and each is stamped once across every instance, so the counters (summed
 * over instances) count committed changes exactly once, never a rolled-back attempt.
 * `transaction.*` events give the wallet transaction's type and status and, in NGN, its amount;
 * `offramp.*` events count as kind OFFRAMP with their stage as status.
 */
export function observeStampedEvents(rows: readonly StampedEvent[]): void {
  for (const row of rows) {
    if (row.type.startsWith('transaction.')) {
      const labels = {
        kind: row.kind && KIND.test(row.kind) ? row.kind : 'OTHER',
        status: row.status && KIND.test(row.status) ? row.status : 'OTHER',
      };
      metrics.moneyOperations.inc(labels);
      const kobo = row.currency === 'NGN' && row.amount ? koboOf(row.amount) : undefined;
      if (kobo !== undefined) metrics.moneyAmount.inc(labels, kobo);
    } else if (row.type.startsWith('offramp.')) {
      metrics.moneyOperations.inc({ kind: 'OFFRAMP', status: row.type.slice('offramp.'.length).toUpperCase() });
    }
  }
}

/** "1500.5" → 150050, by its digits (no floating point); undefined for anything else. */
export function koboOf(naira: string): number | undefined {
  const match = naira.match(/^(\d{1,13})(?:\.(\d{1,2}))?$/);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
