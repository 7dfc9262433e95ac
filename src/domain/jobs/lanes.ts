/**
 * Background work runs in lanes, each with its own concurrency, so a backlog of one kind (a
 * partner's dead webhook endpoint) never holds the slots another kind needs (a deposit settling).
 */
export const LANES = ['money', 'webhooks', 'polling', 'maintenance'] as const;
export type Lane = (typeof LANES)[number];

/** Job kinds that ask a provider or the chain how something ended: they wait on others, not on us. */
const POLLING_KINDS = new Set([
  'bill.status-poll',
  'deposit.reconcile',
  'payout.reconcile',
  'offramp.reconcile',
  'facade.match',
  'facade.gap-fill',
]);

/** The lane of a job kind: one place, so a new kind lands in the money lane unless told otherwise. */
export function laneOf(kind: string): Lane {
  if (kind === 'webhook.deliver') return 'webhooks';
  if (kind.startsWith('retention.') || kind === 'ledger.check' || kind.startsWith('recon.')) return 'maintenance';
  if (POLLING_KINDS.has(kind)) return 'polling';
  return 'money';
}

export interface LaneLimits {
  /** Jobs of the lane running at once in one process. */
  concurrency: number;
  /** Jobs of one tenant running at once in the lane, so one tenant never holds every slot. */
  perTenant: number;
  /** Jobs sharing a concurrency key (one webhook endpoint) running at once. */
  perKey: number;
}

export type LaneSettings = Record<Lane, LaneLimits>;

export const DEFAULT_LANES: LaneSettings = {
  money: { concurrency: 16, perTenant: 4, perKey: 4 },
  webhooks: { concurrency: 32, perTenant: 8, perKey: 4 },
  polling: { concurrency: 8, perTenant: 2, perKey: 2 },
  maintenance: { concurrency: 1, perTenant: 1, perKey: 1 },
};
