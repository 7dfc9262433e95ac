/** Every event kind the gateway emits (the seed's, plus a failure twin for bills and the test event). */
export const EVENT_KINDS = [
  'deposit.initiated',
  'deposit.pending',
  'deposit.completed',
  'deposit.failed',
  'payout.initiated',
  'payout.processing',
  'payout.completed',
  'payout.failed',
  'offramp.initiated',
  'offramp.deposit_received',
  'offramp.processing',
  'offramp.fiat_sent',
  'offramp.completed',
  'offramp.failed',
  'transaction.created',
  'transaction.updated',
  'transaction.completed',
  'transaction.failed',
  'bill.payment.successful',
  'bill.payment.failed',
  'webhook.test',
  'webhook.endpoint.disabled',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

/** `*` subscribes an endpoint to every kind, including kinds added later. */
export const ALL_KINDS = '*';
