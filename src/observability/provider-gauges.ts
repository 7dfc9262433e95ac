import type { UpstreamRefusal } from '../domain/facade/upstream-allowance.js';
import type { UpstreamFault } from '../domain/facade/upstream-outcomes.js';
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

/** A facade's upstream faults since the process started (rest-v1-upstream.ts counts them), set at a scrape. */
export function readUpstreamFaults(faults: ReadonlyMap<UpstreamFault, number> | undefined): void {
  metrics.upstreamFaults.reset();
  for (const [fault, count] of faults ?? []) metrics.upstreamFaults.inc({ fault }, count);
}

/** A facade's upstream calls refused before they were sent, by why (budget, partner_budget, retry_after, deadline), set at a scrape. */
export function readUpstreamRefusals(refusals: ReadonlyMap<UpstreamRefusal, number> | undefined): void {
  metrics.upstreamRefusals.reset();
  for (const [reason, count] of refusals ?? []) metrics.upstreamRefusals.inc({ reason }, count);
}
