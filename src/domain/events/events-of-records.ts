import { and, asc, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { events } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';

/** An event as the caller who caused it is told of it: enough to find it in the feed or a receiver. */
export interface EventHeading {
  id: string;
  type: string;
}

/**
 * The events one owner's records caused, by the records' `reference` (every money event's `data`
 * carries one), written at or after `since`, in the order written. Stamped or not: the caller asks
 * right after its operations committed, before the relay may have numbered them. `since` bounds the
 * read to a short stretch of the `created_at` index instead of the owner's whole history.
 */
export async function eventsOfRecords(
  db: Executor,
  owner: { userId: string; environment: Environment },
  references: readonly string[],
  since: Date,
): Promise<EventHeading[]> {
  if (references.length === 0) return [];
  return db
    .select({ id: events.id, type: events.type })
    .from(events)
    .where(
      and(
        gte(events.createdAt, since),
        eq(events.userId, owner.userId),
        eq(events.environment, owner.environment),
        inArray(sql<string>`${events.data}->>'reference'`, [...references]),
      ),
    )
    .orderBy(asc(events.ordinal));
}
