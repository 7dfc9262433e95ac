import { badInput } from '../errors.js';
import type { MoneyEventKind } from '../events/payloads.js';
import { EVENT_KINDS } from '../webhooks/event-kinds.js';

/**
 * The kinds a sandbox key can trigger: the seed's nineteen and `bill.payment.failed`, every money
 * event the gateway emits. Each is caused by a real sandbox operation (trigger-plans.ts), so none
 * is written by hand. `webhook.test` has its own trigger (the endpoint test) and
 * `webhook.endpoint.disabled` only follows days of failed deliveries; neither is here.
 */
/** The webhook kinds no sandbox operation causes on demand (see above). */
const NOT_TRIGGERABLE = ['webhook.test', 'webhook.endpoint.disabled'] as const;

export type TriggerableKind = Exclude<(typeof EVENT_KINDS)[number], (typeof NOT_TRIGGERABLE)[number]> & MoneyEventKind;

export const TRIGGERABLE_KINDS: readonly TriggerableKind[] = EVENT_KINDS.filter(
  (kind): kind is TriggerableKind => !(NOT_TRIGGERABLE as readonly string[]).includes(kind),
);

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
