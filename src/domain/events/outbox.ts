import { and, asc, eq, gt, inArray, isNotNull, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { events } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import { laneOf } from '../jobs/lanes.js';
import { ALL_KINDS } from '../webhooks/event-kinds.js';
import { DELIVERY_JOB } from '../webhooks/webhook.js';
import type { NewEvent, StoredEvent } from './event.js';
import { toStoredEvent } from './event-row.js';
import { traceContextJson } from '../../observability/job-observation.js';

/**
 * Records an event. Call it with the transaction that makes the change the event describes, so
 * the two commit or roll back together; nothing is sent from here (see relay.ts and the jobs).
 *
 * The event, a webhook delivery for each enabled endpoint of its owner subscribed to its kind, and
 * each delivery's job are written by one statement: every domain write that emits an event pays
 * one round trip for it, not three.
 */
export async function recordEvent(
  tx: Executor,
  event: NewEvent,
  at: Date,
  options: { fanOut?: boolean } = {},
): Promise<StoredEvent> {
  const createdAt = at.toISOString();
  const inserted = sql`insert into events (type, user_id, environment, data, created_at)
    values (${event.type}, ${event.userId}, ${event.environment}, ${JSON.stringify(event.data)}::jsonb, ${createdAt}::timestamptz)
    returning id`;
  const [row] = await queryRows<{ id: string }>(
    tx,
    options.fanOut === false
      ? inserted
      : sql`
        with event as (${inserted}),
        deliveries as (
          insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at)
          select endpoint.id, event.id, ${createdAt}::timestamptz
          from webhook_endpoints endpoint, event
          where endpoint.user_id = ${event.userId} and endpoint.environment = ${event.environment}
            and endpoint.enabled and endpoint.deleted_at is null
            and (${event.type} = any(endpoint.event_types) or ${ALL_KINDS} = any(endpoint.event_types))
          returning id, endpoint_id
        ),
        queued as (
          insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at)
          select ${DELIVERY_JOB}, ${laneOf(DELIVERY_JOB)}, ${event.userId}, deliveries.endpoint_id::text,
            jsonb_build_object('deliveryId', deliveries.id) || ${traceContextJson()}::jsonb,
            ${createdAt}::timestamptz
          from deliveries
          returning 1
        )
        select event.id from event`,
  );
  return {
    id: row!.id,
    type: event.type,
    created: Math.floor(at.getTime() / 1000),
    data: event.data,
    userId: event.userId,
    environment: event.environment,
    seq: null,
  };
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
