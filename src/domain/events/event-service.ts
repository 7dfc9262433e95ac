import type { Database } from '../../db/client.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Principal } from '../auth/principal.js';
import { badInput, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { StoredEvent } from './event.js';
import { eventStore } from './outbox.js';

export const MAX_EVENTS_PAGE = 200;

export interface EventPage {
  events: StoredEvent[];
  endSeq: number;
  hasMore: boolean;
}

/** Reads of the caller's own event log; writes happen through recordEvent in domain transactions. */
export class EventService {
  constructor(private readonly db: Database) {}

  async page(principal: Principal, after: number, first: number, types?: readonly string[]): Promise<EventPage> {
    if (!Number.isSafeInteger(after) || after < 0) throw badInput('after', 'after must be a non-negative integer.');
    if (!Number.isInteger(first) || first < 1 || first > MAX_EVENTS_PAGE) {
      throw badInput('first', `first must be between 1 and ${MAX_EVENTS_PAGE}.`);
    }
    // One extra row tells whether another page exists without a count query.
    const rows = await eventStore.listEventsAfter(readsOf(this.db), principal, after, first + 1, types);
    const events = rows.slice(0, first);
    return { events, endSeq: events.at(-1)?.seq ?? after, hasMore: rows.length > first };
  }

  async get(principal: Principal, id: string): Promise<StoredEvent> {
    const event = isUuid(id) ? await eventStore.findEventById(this.db, id) : undefined;
    // Another owner's or environment's event, or one not yet in commit order, reads as missing.
    if (
      !event ||
      event.seq === null ||
      event.userId !== principal.userId ||
      event.environment !== principal.environment
    ) {
      throw notFound('Event');
    }
    return event;
  }
}
