import { and, asc, eq, gt, inArray, isNotNull } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { events } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import { webhookStore } from '../webhooks/webhook-store.js';
import type { NewEvent, StoredEvent } from './event.js';
import { toStoredEvent } from './event-row.js';

/**
 * Records an event. Call it with the transaction that makes the change the event describes, so
 * the two commit or roll back together; nothing is sent from here (see relay.ts and the jobs).
 */
export async function recordEvent(tx: Executor, event: NewEvent, at: Date, options: { fanOut?: boolean } = {}): Promise<StoredEvent> {
  const [row] = await tx
    .insert(events)
    .values({ type: event.type, userId: event.userId, environment: event.environment, data: event.data, createdAt: at })
    .returning();
  const stored = toStoredEvent(row!);
  // Webhook deliveries are rows (and jobs) of the same transaction: the event and its deliveries
  // exist together or not at all.
  if (options.fanOut !== false) await webhookStore.fanOutEvent(tx, stored, at);
  return stored;
}

export const eventStore = {
  /** Stamped events of one owner after a position, in commit order, optionally of some kinds only. */
  async listEventsAfter(
    db: Executor,
    owner: { userId: string; environment: Environment },
    afterSeq: number,
    limit: number,
    types?: readonly string[],
  ): Promise<StoredEvent[]> {
    const rows = await db
      .select()
      .from(events)
      .where(
        and(
          eq(events.userId, owner.userId),
          eq(events.environment, owner.environment),
          isNotNull(events.seq),
          gt(events.seq, afterSeq),
          types && types.length > 0 ? inArray(events.type, [...types]) : undefined,
        ),
      )
      .orderBy(asc(events.seq))
      .limit(limit);
    return rows.map(toStoredEvent);
  },

  async findEventById(db: Executor, id: string): Promise<StoredEvent | undefined> {
    const [row] = await db.select().from(events).where(eq(events.id, id));
    return row ? toStoredEvent(row) : undefined;
  },
};
