import type { Database } from '../../db/client.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Principal } from '../auth/principal.js';
import { badInput, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { StoredEvent } from './event.js';
import { eventStore } from './outbox.js';

export const MAX_EVENTS_PAGE = 200;

export interface EventHistoryPage {
  /** Newest first. */
  events: StoredEvent[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextBefore: number | null;
}

export interface EventPage {
  events: StoredEvent[];
  endSeq: number;
  hasMore: boolean;
}

/** Another owner's or environment's event, or one not yet in commit order, reads as missing. */
export function visibleTo(event: StoredEvent, principal: Principal): boolean {
  return event.seq !== null && event.userId === principal.userId && event.environment === principal.environment;
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

  /** The caller's events newest first, `before` a `seq` from an earlier page's `nextBefore`. */
  async history(
    principal: Principal,
    options: { before?: number | undefined; first: number; types?: readonly string[] | undefined },
  ): Promise<EventHistoryPage> {
    const { before, first, types } = options;
    if (before !== undefined && (!Number.isSafeInteger(before) || before < 1))
      throw badInput('before', 'before must be a positive integer from an earlier page.');
    if (!Number.isInteger(first) || first < 1 || first > MAX_EVENTS_PAGE) {
      throw badInput('first', `first must be between 1 and ${MAX_EVENTS_PAGE}.`);
    }
    const rows = await eventStore.listEventsBefore(readsOf(this.db), principal, before, first + 1, types);
    const events = rows.slice(0, first);
    return { events, nextBefore: rows.length > first ? (events.at(-1)?.seq ?? null) : null };
  }

  async get(principal: Principal, id: string): Promise<StoredEvent> {
    const event = isUuid(id) ? await eventStore.findEventById(this.db, id) : undefined;
    if (!event || !visibleTo(event, principal)) throw notFound('Event');
    return event;
  }
}
