import { and, asc, desc, eq, gt, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { events } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import type { NewEvent, StoredEvent } from './event.js';
import { toStoredEvent } from './event-row.js';
import { hintRelays } from './relay.js';
import { traceContextJson } from '../../observability/job-observation.js';

/**
 * The request's trace context as the event keeps it (null in no trace): the relay puts it into
 * each delivery job it fans the event out to, so the delivery's trace links to the request.
 */
export function eventTraceContext(): string | null {
  const json = traceContextJson();
  return json === '{}' ? null : json;
}

/**
 * Records an event. Call it with the transaction that makes the change the event describes, so
 * the two commit or roll back together; nothing is sent from here (see relay.ts and the jobs).
 *
 * One row, one statement: webhook deliveries and their jobs are written after the relay has
 * stamped the event, by the relay's own transaction, in batches (fan-out.ts). Writing a delivery
 * and a job per endpoint in every request's transaction cost P2P about 40 % of its CPU.
 */
export async function recordEvent(tx: Executor, event: NewEvent, at: Date): Promise<StoredEvent> {
  const [row] = await queryRows<{ id: string }>(
    tx,
    sql`insert into events (type, user_id, environment, data, created_at, trace_context)
      values (${event.type}, ${event.userId}, ${event.environment}, ${JSON.stringify(event.data)}::jsonb,
        ${at.toISOString()}::timestamptz, ${eventTraceContext()}::jsonb)
      returning id`,
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
 * Records several events (of any owners and kinds) written by one transaction, in this order, in
 * ONE statement: one round trip instead of one per event, so the transaction (and the row locks
 * it holds) stays short. Returns the events in the order given.
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
        insert into events (type, user_id, environment, data, created_at, trace_context)
        select type, user_id, environment, data, ${createdAt}::timestamptz, ${eventTraceContext()}::jsonb
        from input order by n
        returning id, ordinal
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
      .where(and(stampedOf(owner, types), gt(events.seq, afterSeq)))
      .orderBy(asc(events.seq))
      .limit(limit);
    return rows.map(toStoredEvent);
  },

  /**
   * Stamped events of one owner before a position (all when none), newest first, optionally of some
   * kinds only: the dashboard's history. Walks the owner's `seq` index backwards.
   */
  async listEventsBefore(
    db: Executor,
    owner: { userId: string; environment: Environment },
    beforeSeq: number | undefined,
    limit: number,
    types?: readonly string[],
  ): Promise<StoredEvent[]> {
    const rows = await db
      .select()
      .from(events)
      .where(and(stampedOf(owner, types), beforeSeq === undefined ? undefined : lt(events.seq, beforeSeq)))
      .orderBy(desc(events.seq))
      .limit(limit);
    return rows.map(toStoredEvent);
  },

  async findEventById(db: Executor, id: string): Promise<StoredEvent | undefined> {
    const [row] = await db.select().from(events).where(eq(events.id, id));
    return row ? toStoredEvent(row) : undefined;
  },
};

/** One owner's stamped events, of some kinds only when given: what both walks along `seq` read. */
function stampedOf(owner: { userId: string; environment: Environment }, types?: readonly string[]) {
  return and(
    eq(events.userId, owner.userId),
    eq(events.environment, owner.environment),
    isNotNull(events.seq),
    types && types.length > 0 ? inArray(events.type, [...types]) : undefined,
  );
}
