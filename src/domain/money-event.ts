import type { Environment } from './auth/permissions.js';
import type { NewEvent } from './events/event.js';
import type { EventDataOf, MoneyEventKind } from './events/payloads.js';

/**
 * A money event to record, its `data` checked against its kind's type (events/payloads.ts): a
 * producer cannot send a kind with another kind's data, or data missing a field partners read.
 */
export function moneyEvent<K extends MoneyEventKind>(
  type: K,
  owner: { userId: string; environment: Environment },
  data: EventDataOf[K],
): NewEvent {
  return {
    type,
    userId: owner.userId,
    environment: owner.environment,
    data: data as unknown as Record<string, unknown>,
  };
}
