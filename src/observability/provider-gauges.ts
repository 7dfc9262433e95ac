import type { BulkheadStats } from '../domain/upstream/bulkhead.js';
import { metrics } from './metrics.js';

/**
 * Each provider's bulkhead as it stands at a scrape (upstream/bulkhead.ts): calls in flight and
 * waiting against the limit, and the calls refused since the process started (a counter, set to
 * the bulkhead's own count). A bulkhead is made when its provider is first called, so a provider
 * has series from then on.
 */
export function readBulkheads(stats: BulkheadStats[]): void {
  metrics.providerCallsRejected.reset();
  for (const { provider, limit, inFlight, waiting, rejected } of stats) {
    const labels = { provider };
    metrics.providerCallsInFlight.set(labels, inFlight);
    metrics.providerCallsLimit.set(labels, limit);
    metrics.providerCallsWaiting.set(labels, waiting);
    metrics.providerCallsRejected.inc(labels, rejected);
  }
}
