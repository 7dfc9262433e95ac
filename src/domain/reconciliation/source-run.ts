import type { Executor } from '../../db/client.js';
import { compareBalances } from './balances.js';
import { type Break, clearingOf, matchRecords } from './matcher.js';
import type { ListWindow } from './records.js';
import type { ReconciliationSource } from './sources.js';

/** Both sides are listed this much beyond the day, so an item stamped a little apart on each side still meets its pair. */
const MARGIN_MS = 15 * 60_000;

export interface SourceSummary {
  provider: string;
  ours: number;
  theirs: number;
  matched: number;
  breaks: number;
  /** Kobo, as decimal text; null where amounts cannot be summed (tokens) or the provider was not read. */
  clearingMinor: string | null;
  /** True once the day's end plus the provider's settlement window has passed. */
  clearingDue: boolean;
  error?: string;
}

/**
 * One provider's part of a run: both sides listed a little wider than the day, matched, and only
 * the day's items counted. A provider that cannot be read answers with its error and no breaks
 * (undefined, not empty: its open breaks must not be taken as cleared).
 */
export async function reconcileSource(
  db: Executor,
  source: ReconciliationSource,
  window: ListWindow,
  clearingDue: boolean,
  settlementHours = 0,
): Promise<{ summary: SourceSummary; breaks: Break[] | undefined }> {
  const inDay = (at: Date) => at >= window.from && at < window.to;
  const padded = { from: new Date(window.from.getTime() - MARGIN_MS), to: new Date(window.to.getTime() + MARGIN_MS) };
  const summary: SourceSummary = {
    provider: source.provider,
    ours: 0,
    theirs: 0,
    matched: 0,
    breaks: 0,
    clearingMinor: null,
    clearingDue,
  };
  let items: Awaited<ReturnType<ReconciliationSource['items']>>;
  try {
    items = await source.items(db, padded, { hours: settlementHours, due: clearingDue });
  } catch (error) {
    return {
      summary: { ...summary, error: error instanceof Error ? error.message : String(error) },
      breaks: undefined,
    };
  }
  const breaks: Break[] = [];
  // Null when no item's amounts can be summed in the provider's clearing currency (tokens).
  let clearing: bigint | null = null;
  for (const item of items) {
    const result =
      item.compare === 'balances'
        ? compareBalances(item.itemType, item.ours, item.theirs, item.breakKind)
        : matchRecords(item.itemType, item.ours, item.theirs);
    breaks.push(...result.breaks.filter((b) => inDay((b.ours ?? b.theirs)!.at)));
    summary.matched += result.matched.filter(inDay).length;
    const ourDay = item.ours.filter((r) => inDay(r.at));
    const theirDay = item.theirs.filter((r) => inDay(r.at));
    summary.ours += ourDay.length;
    summary.theirs += theirDay.length;
    if (item.clearing) clearing = (clearing ?? 0n) + clearingOf(item.direction, ourDay, theirDay);
  }
  summary.breaks = breaks.length;
  summary.clearingMinor = clearing === null ? null : clearing.toString();
  return { summary, breaks };
}
