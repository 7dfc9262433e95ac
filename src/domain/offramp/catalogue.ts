/** The seed's offramp enums, exactly as the REST API spells them. */
export const OFFRAMP_TOKENS = ['USDT', 'USDC', 'CNGN'] as const;
export const OFFRAMP_NETWORKS = [
  'base',
  'polygon',
  'arbitrum-one',
  'bnb-smart-chain',
  'ethereum',
  'starknet',
  'optimism',
  'lisk',
  'scroll',
] as const;
export const FIAT_CURRENCIES = ['NGN', 'GHS', 'KES', 'USD'] as const;

export type OfframpToken = (typeof OFFRAMP_TOKENS)[number];
export type OfframpNetwork = (typeof OFFRAMP_NETWORKS)[number];
export type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

/** Fiat amounts are kept in minor units; every supported fiat has two decimals. */
export const FIAT_DECIMALS = 2;

export const OFFRAMP_STATUSES = [
  'initiated',
  'deposit_received',
  'processing',
  'fiat_sent',
  'completed',
  'failed',
  'expired',
  'refunded',
] as const;
export type OfframpStatus = (typeof OFFRAMP_STATUSES)[number];

/** Where an order can still go: forward along the happy path, or to a failure from any open state. */
const PROGRESS: Record<OfframpStatus, number> = {
  initiated: 0,
  deposit_received: 1,
  processing: 2,
  fiat_sent: 3,
  completed: 4,
  failed: 9,
  expired: 9,
  refunded: 9,
};

export const isFinal = (status: OfframpStatus) =>
  status === 'completed' || status === 'failed' || status === 'expired' || status === 'refunded';

/**
 * Whether `from` may become `to`. Only forward: a repeated or late provider notice (deposited after
 * validated) changes nothing. `expired` is possible only before a deposit (nothing was paid in);
 * `refunded` only after one.
 */
export function canMove(from: OfframpStatus, to: OfframpStatus): boolean {
  if (isFinal(from) || from === to) return false;
  if (to === 'expired') return from === 'initiated';
  if (to === 'refunded') return from !== 'initiated';
  return PROGRESS[to] > PROGRESS[from];
}

/** The event each status emits; the three failures share `offramp.failed` and differ in `data.status`. */
export const EVENT_OF_STATUS: Record<OfframpStatus, string> = {
  initiated: 'offramp.initiated',
  deposit_received: 'offramp.deposit_received',
  processing: 'offramp.processing',
  fiat_sent: 'offramp.fiat_sent',
  completed: 'offramp.completed',
  failed: 'offramp.failed',
  expired: 'offramp.failed',
  refunded: 'offramp.failed',
};

export const OFFRAMP_EVENT_KINDS = [...new Set(Object.values(EVENT_OF_STATUS))];
