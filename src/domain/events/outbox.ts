import { and, asc, eq, gt, inArray, isNotNull, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { events } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import { laneOf } from '../jobs/lanes.js';
import { ALL_KINDS } from '../webhooks/event-kinds.js';
import { DELIVERY_JOB } from '../webhooks/webhook.js';
import type { NewEvent, StoredEvent } from './event.js';
import { toStoredEvent } from './event-row.js';
import { hintRelays } from './relay.js';
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
  hintRelays();
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

/**
 * Records several events (of any owners and kinds) written by one transaction, in this order,
 * with their webhook deliveries and jobs, in ONE statement: one round trip instead of one per
 * event, so the transaction (and the row locks it holds) stays short. Returns the events in the
 * order given.
 */
export async function recordEvents(tx: Executor, batch: readonly NewEvent[], at: Date): Promise<StoredEvent[]> {
  if (batch.length === 0) return [];
  const createdAt = at.toISOString();
  const input = JSON.stringify(
    batch.map((e) => ({ type: e.type, userId: e.userId, environment: e.environment, data: e.data })),
  );
  const rows = await queryRows<{ id: string; n: unknown }>(
    tx,
    sql`
      with input as (
        select i.n, i.e->>'type' as type, (i.e->>'userId')::uuid as user_id,
          (i.e->>'environment')::environment as environment, i.e->'data' as data
        from jsonb_array_elements(${input}::jsonb) with ordinality as i(e, n)
      ),
      event as (
        insert into events (type, user_id, environment, data, created_at)
        select type, user_id, environment, data, ${createdAt}::timestamptz from input order by n
        returning id, ordinal, type, user_id, environment
      ),
      deliveries as (
        insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at)
        select endpoint.id, event.id, ${createdAt}::timestamptz
        from event join webhook_endpoints endpoint
          on endpoint.user_id = event.user_id and endpoint.environment = event.environment
        where endpoint.enabled and endpoint.deleted_at is null
          and (event.type = any(endpoint.event_types) or ${ALL_KINDS} = any(endpoint.event_types))
        returning id, endpoint_id
      ),
      queued as (
        insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at)
        select ${DELIVERY_JOB}, ${laneOf(DELIVERY_JOB)}, endpoint.user_id::text, deliveries.endpoint_id::text,
          jsonb_build_object('deliveryId', deliveries.id) || ${traceContextJson()}::jsonb,
          ${createdAt}::timestamptz
        from deliveries join webhook_endpoints endpoint on endpoint.id = deliveries.endpoint_id
        returning 1
      )
      select id, row_number() over (order by ordinal) as n from event`,
  );
  hintRelays();
  const ids = rows.sort((a, b) => Number(a.n) - Number(b.n)).map((r) => r.id);
  return batch.map((event, i) => ({
    id: ids[i]!,
    type: event.type,
    created: Math.floor(at.getTime() / 1000),
    data: event.data,
    userId: event.userId,
    environment: event.environment,
    seq: null,
  }));
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
