import { badInput } from '../errors.js';
import type { MoneyEventKind } from '../events/payloads.js';

/**
 * The kinds a sandbox key can trigger: the seed's nineteen and `bill.payment.failed`, every money
 * event the gateway emits. Each is caused by a real sandbox operation (trigger-plans.ts), so none
 * is written by hand. `webhook.test` has its own trigger (the endpoint test) and
 * `webhook.endpoint.disabled` only follows days of failed deliveries; neither is here.
 */
export const TRIGGERABLE_KINDS = [
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
] as const satisfies readonly MoneyEventKind[];

export type TriggerableKind = (typeof TRIGGERABLE_KINDS)[number];

const TRIGGERABLE: ReadonlySet<string> = new Set(TRIGGERABLE_KINDS);

/** The kind a caller asked for, or a refusal naming every kind it could have asked for. */
export function triggerableKind(input: unknown): TriggerableKind {
  const kind = typeof input === 'string' ? input.trim() : '';
  if (TRIGGERABLE.has(kind)) return kind as TriggerableKind;
  const shown = typeof input === 'string' ? JSON.stringify(input.slice(0, 64)) : 'missing';
  throw badInput(
    'type',
    `type ${shown} is not an event kind that can be triggered; one of: ${TRIGGERABLE_KINDS.join(', ')}.`,
  );
}
