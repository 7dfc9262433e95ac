import type { Database } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { type EventHeading, eventsOfRecords } from '../events/events-of-records.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { type TriggerableKind, triggerableKind } from './trigger-kinds.js';
import { TRIGGER_PLANS, type TriggerServices } from './trigger-plans.js';

/** What a trigger did and the events it caused, so the caller can find them in its feed and receivers. */
export interface TriggeredEvents {
  type: TriggerableKind;
  /** The first event of the kind asked for. */
  eventId: string;
  /** Every event the operations wrote, in the order written (the asked kind's among them). */
  events: EventHeading[];
  /** The references of the records the operations made. */
  references: string[];
  /** What was done, in a sentence. */
  description: string;
}

/**
 * Caused events hold back from the records' creation time by this much: an event's `created_at`
 * is its operation's clock reading, which may be taken a moment before the record's.
 */
const CLOCK_SLACK_MS = 60_000;

/**
 * Sandbox only: fires one event kind for the caller by running the sandbox operation that emits
 * it (a deposit, payout, bill payment or offramp order, through their services), so the event is
 * the real one: written by the operation's own transaction through the outbox, with its records
 * and postings, then stamped, delivered to webhooks and streamed like any other.
 */
export class EventTriggerService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly services: TriggerServices,
  ) {}

  async trigger(principal: Principal, typeInput: unknown, key: string | undefined): Promise<TriggeredEvents> {
    // Before anything is read or run: production events come only from real operations.
    if (principal.environment !== 'sandbox') {
      throw new DomainError(
        'FORBIDDEN',
        'Events can be triggered with a sandbox key only: this is a production key, and production events come only from real operations.',
      );
    }
    const type = triggerableKind(typeInput);
    const plan = TRIGGER_PLANS[type];
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'sandbox.trigger-event' };
    return this.idempotency.run(scope, key, { type }, async () => {
      const keyOf = (step: string) =>
        key === undefined
          ? undefined
          : `trigger-${this.idempotency.fingerprint({ scope: scope.operation, key, step }).slice(0, 40)}`;
      const records = await plan
        .run({ services: this.services, principal, keyOf, now: this.clock.now() })
        .catch((error: unknown) => {
          throw isStepKeyBusy(error) ? stepStillRunning() : error;
        });
      const oldest = Math.min(...records.map((record) => record.createdAt.getTime()));
      const events = await eventsOfRecords(
        this.db,
        principal,
        records.map((record) => record.reference),
        new Date(oldest - CLOCK_SLACK_MS),
      );
      const asked = events.find((event) => event.type === type);
      // Every plan emits its kind (test/sandbox/event-trigger.test.ts runs each); a plan that did
      // not is the gateway's fault.
      if (!asked) throw new Error(`The sandbox operation for ${type} emitted no ${type} event.`);
      return {
        type,
        eventId: asked.id,
        events,
        references: records.map((record) => record.reference),
        description: plan.does,
      };
    });
  }
}

/** A step's own key still held: an earlier attempt's step (cut off mid-call) has not finished. */
const isStepKeyBusy = (error: unknown) =>
  error instanceof DomainError && error.code === 'CONFLICT' && error.field === 'Idempotency-Key';

/**
 * A "later", never the trigger key's answer: stored, the step's passing 409 would be replayed to
 * every retry of the trigger for good, although the step finishes (or gives its key back) soon.
 */
const stepStillRunning = () =>
  new DomainError('BUSY', 'A step of this trigger is still running from an earlier attempt; retry shortly.', {
    retryAfter: 5,
  });
