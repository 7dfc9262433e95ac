import type { ProviderRecord, RecordStatus } from './records.js';

export const BREAK_KINDS = [
  'missing_ours',
  'missing_theirs',
  'amount_differs',
  'status_differs',
  'balance_differs',
] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

/** One of the gateway's movements, as its own tables record it. */
export interface OurRecord {
  itemType: string;
  /** The reference the provider knows it by. */
  reference: string;
  /** The provider's id, when the gateway stored one (a second key to match on). */
  providerRef: string | null;
  amount: bigint;
  currency: string;
  status: RecordStatus;
  at: Date;
}

export interface Break {
  kind: BreakKind;
  itemType: string;
  reference: string;
  currency: string;
  ours: OurRecord | undefined;
  theirs: ProviderRecord | undefined;
}

export interface MatchResult {
  /** When each matched item happened (the gateway's time, else the provider's): callers count a day's. */
  matched: Date[];
  breaks: Break[];
}

/**
 * Matches one item type of one provider: by the reference the gateway sent, then by the
 * provider's id; a matched pair must agree on status, then on amount. An item only one side has
 * is a break when that side says the money moved: a pending or failed record the other side never
 * saw moved nothing (a charge abandoned, a transfer refused before it left). A second record of
 * the provider's under a reference already matched (a payout paid twice) is missing on ours.
 */
export function matchRecords(itemType: string, ours: OurRecord[], theirs: ProviderRecord[]): MatchResult {
  const byReference = new Map<string, ProviderRecord[]>();
  const byProviderRef = new Map<string, ProviderRecord[]>();
  for (const record of theirs) {
    push(byReference, record.reference, record);
    push(byProviderRef, record.providerRef, record);
  }
  const used = new Set<ProviderRecord>();
  const take = (list: ProviderRecord[] | undefined) => list?.find((r) => !used.has(r));
  const breaks: Break[] = [];
  const matched: Date[] = [];
  for (const our of ours) {
    const their =
      take(byReference.get(our.reference)) ?? (our.providerRef ? take(byProviderRef.get(our.providerRef)) : undefined);
    const at = { itemType, reference: our.reference, currency: our.currency, ours: our, theirs: their };
    if (!their) {
      if (our.status === 'succeeded') breaks.push({ kind: 'missing_theirs', ...at });
      else matched.push(our.at);
      continue;
    }
    used.add(their);
    if (their.status !== our.status) breaks.push({ kind: 'status_differs', ...at });
    else if (our.status !== 'failed' && their.amount !== null && their.amount !== our.amount)
      breaks.push({ kind: 'amount_differs', ...at });
    else matched.push(our.at);
  }
  for (const their of theirs) {
    if (used.has(their)) continue;
    if (their.status === 'succeeded')
      breaks.push({
        kind: 'missing_ours',
        itemType,
        reference: their.reference,
        currency: their.currency,
        ours: undefined,
        theirs: their,
      });
    else matched.push(their.at);
  }
  return { matched, breaks };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The provider's clearing position from matched and unmatched items: what the gateway's books
 * moved through provider clearing minus what the provider says it settled, signed like the
 * clearing account (money in debits it, money out credits it). Every matched item nets to zero,
 * so a non-zero figure is money one side moved and the other did not.
 */
export function clearingOf(direction: 'in' | 'out', ours: OurRecord[], theirs: ProviderRecord[]): bigint {
  const sign = direction === 'in' ? -1n : 1n;
  const moved = (records: Array<{ status: RecordStatus; amount: bigint | null }>) =>
    records.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + (r.amount ?? 0n), 0n);
  return sign * (moved(ours) - moved(theirs));
}
