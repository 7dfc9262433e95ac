import { and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import { preparedOnce } from '../../db/prepared-once.js';
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema.js';
import { toStoredEvent } from '../events/event-row.js';
import type { Environment } from '../auth/permissions.js';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook.js';

type EndpointRow = typeof webhookEndpoints.$inferSelect;

/**
 * The delivery worker's read before each attempt, built once per handle: building the three-table
 * join through the query builder for every attempt cost more of the process than running it.
 */
const deliveryWithEndpointAndEvent = preparedOnce((db) =>
  db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: events })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(eq(webhookDeliveries.id, sql.placeholder('id')))
    .prepare('webhook_delivery_with_endpoint_and_event'),
);

/**
 * A successful attempt's one statement (see `recordSuccessfulAttempt`), as plain text: one per
 * delivery sent. $1 job, $2 lease token, $3 delivery, $4 now, $5 attempt started, $6 duration ms,
 * $7 status code, $8 error, $9 response snippet, $10 manual, $11 endpoint.
 */
const successfulAttempt = statement(
  'webhook_successful_attempt_v1',
  `
        with fence as (
          select 1 from jobs where id = $1 and lease_token = $2::uuid and status = 'pending'
          for update
        ),
        taken as (
          update webhook_deliveries
          set attempt_count = attempt_count + 1, status = 'succeeded', next_attempt_at = null,
            updated_at = $4::timestamptz
          where id = $3 and exists (select 1 from fence)
          returning attempt_count
        ),
        attempt as (
          insert into webhook_attempts
            (delivery_id, attempt_number, started_at, duration_ms, status_code, error, response_snippet, manual)
          select $3, attempt_count, $5::timestamptz, $6,
            $7, $8, $9, $10
          from taken
        ),
        health as (
          update webhook_endpoints
          set consecutive_failures = 0, failing_since = null, circuit_open_until = null
          where id = $11 and (consecutive_failures > 0 or circuit_open_until is not null)
            and exists (select 1 from taken)
        )
        select count(*)::int as recorded from taken`,
);

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    userId: row.userId,
    environment: row.environment,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    failingSince: row.failingSince,
    secretRotationEndsAt: row.previousSecretExpiresAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const owned = (owner: { userId: string; environment: Environment }, id: string) =>
  and(
    eq(webhookEndpoints.id, id),
    eq(webhookEndpoints.userId, owner.userId),
    eq(webhookEndpoints.environment, owner.environment),
    isNull(webhookEndpoints.deletedAt),
  );

export const webhookStore = {
  async insertEndpoint(db: Executor, row: typeof webhookEndpoints.$inferInsert): Promise<EndpointRow> {
    const [inserted] = await db.insert(webhookEndpoints).values(row).returning();
    return inserted!;
  },

  async findOwnedEndpoint(
    db: Executor,
    owner: { userId: string; environment: Environment },
    id: string,
  ): Promise<EndpointRow | undefined> {
    const [row] = await db.select().from(webhookEndpoints).where(owned(owner, id));
    return row;
  },

  async listOwnedEndpoints(db: Executor, owner: { userId: string; environment: Environment }): Promise<EndpointRow[]> {
    return db
      .select()
      .from(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.userId, owner.userId),
          eq(webhookEndpoints.environment, owner.environment),
          isNull(webhookEndpoints.deletedAt),
        ),
      )
      .orderBy(desc(webhookEndpoints.createdAt));
  },

  async updateEndpoint(
    db: Executor,
    id: string,
    changes: Partial<typeof webhookEndpoints.$inferInsert>,
  ): Promise<EndpointRow> {
    const [row] = await db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id)).returning();
    return row!;
  },

  async insertDelivery(db: Executor, endpointId: string, eventId: string, at: Date): Promise<WebhookDelivery> {
    const [row] = await db.insert(webhookDeliveries).values({ endpointId, eventId, nextAttemptAt: at }).returning();
    return row!;
  },

  /**
   * A delivery written by hand (an event re-sent to an endpoint it never went to), unless one for
   * this event and endpoint exists already (fan-out, or a re-send racing this one): then undefined.
   */
  async insertDeliveryUnlessPresent(
    db: Executor,
    endpointId: string,
    eventId: string,
    at: Date,
  ): Promise<WebhookDelivery | undefined> {
    const [row] = await db
      .insert(webhookDeliveries)
      .values({ endpointId, eventId, nextAttemptAt: at })
      .onConflictDoNothing({ target: [webhookDeliveries.eventId, webhookDeliveries.endpointId] })
      .returning();
    return row;
  },

  async findDeliveryOf(db: Executor, eventId: string, endpointId: string): Promise<WebhookDelivery | undefined> {
    const [row] = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.endpointId, endpointId)));
    return row;
  },

  /**
   * The deliveries of some events to the owner's endpoints (deleted ones included), oldest first,
   * with each endpoint's URL: one query by the (event_id, endpoint_id) index for a page of events.
   */
  async listDeliveriesOfEvents(
    db: Executor,
    owner: { userId: string; environment: Environment },
    eventIds: readonly string[],
  ): Promise<Array<WebhookDelivery & { endpointUrl: string; endpointDeleted: boolean }>> {
    if (eventIds.length === 0) return [];
    const rows = await db
      .select({ delivery: webhookDeliveries, url: webhookEndpoints.url, deletedAt: webhookEndpoints.deletedAt })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(
        and(
          inArray(webhookDeliveries.eventId, [...eventIds]),
          eq(webhookEndpoints.userId, owner.userId),
          eq(webhookEndpoints.environment, owner.environment),
        ),
      )
      .orderBy(asc(webhookDeliveries.createdAt));
    return rows.map((r) => ({ ...r.delivery, endpointUrl: r.url, endpointDeleted: r.deletedAt !== null }));
  },

  async findDeliveryWithEndpointAndEvent(db: Executor, id: string) {
    const [row] = await deliveryWithEndpointAndEvent(db).execute({ id });
    return row ? { delivery: row.delivery, endpoint: row.endpoint, event: toStoredEvent(row.event) } : undefined;
  },

  async findDelivery(db: Executor, id: string): Promise<WebhookDelivery | undefined> {
    const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    return row;
  },

  /**
   * The id each event is known by outside, for deliveries shown to their owner: an event a facade
   * took from its upstream keeps the upstream's id (event-row.ts); the gateway's own, the row's.
   */
  async publicEventIds(db: Executor, eventIds: readonly string[]): Promise<Map<string, string>> {
    if (eventIds.length === 0) return new Map();
    const rows = await db
      .select({ id: events.id, sourceId: events.sourceId })
      .from(events)
      .where(inArray(events.id, [...new Set(eventIds)]));
    return new Map(rows.map((row) => [row.id, row.sourceId ?? row.id]));
  },

  async listDeliveries(db: Executor, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    return db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpointId))
      .orderBy(desc(webhookDeliveries.createdAt))
      .limit(limit);
  },

  async updateDelivery(
    db: Executor,
    id: string,
    changes: Partial<typeof webhookDeliveries.$inferInsert>,
  ): Promise<void> {
    await db.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, id));
  },

  /**
   * Increments the delivery's attempt count under its row lock, returning the new attempt's number
   * and how many scheduled (not by hand) attempts were already recorded: those decide the next
   * retry delay.
   */
  async takeAttemptNumber(
    db: Executor,
    deliveryId: string,
    at: Date,
  ): Promise<{ attemptNumber: number; scheduledBefore: number }> {
    const [row] = await db
      .update(webhookDeliveries)
      .set({ attemptCount: sql`${webhookDeliveries.attemptCount} + 1`, updatedAt: at })
      .where(eq(webhookDeliveries.id, deliveryId))
      .returning({
        attemptNumber: webhookDeliveries.attemptCount,
        scheduledBefore: sql<string>`(select count(*) from ${webhookAttempts} where ${webhookAttempts.deliveryId} = ${deliveryId} and not ${webhookAttempts.manual})`,
      });
    return { attemptNumber: row!.attemptNumber, scheduledBefore: Number(row!.scheduledBefore) };
  },

  /**
   * A successful scheduled or manual attempt, recorded by one statement (no transaction held open
   * across round trips): the job's lease fence (row locked, token checked), the attempt numbered
   * under the delivery's row lock, the delivery succeeded, the endpoint's failure streak reset.
   * Returns false when the lease was lost (nothing is written then).
   */
  async recordSuccessfulAttempt(
    db: Executor,
    job: { id: string; leaseToken: string },
    deliveryId: string,
    endpointId: string,
    attempt: Omit<WebhookAttempt, 'attemptNumber'>,
    at: Date,
  ): Promise<boolean> {
    const rows = await runIn<{ recorded: unknown }>(db, successfulAttempt, [
      job.id,
      job.leaseToken,
      deliveryId,
      at.toISOString(),
      attempt.startedAt.toISOString(),
      attempt.durationMs,
      attempt.statusCode,
      attempt.error,
      attempt.responseSnippet,
      attempt.manual,
      endpointId,
    ]);
    return Number(rows[0]?.recorded ?? 0) > 0;
  },

  async insertAttempt(db: Executor, deliveryId: string, attempt: WebhookAttempt): Promise<void> {
    await db.insert(webhookAttempts).values({ deliveryId, ...attempt });
  },

  async listAttempts(
    db: Executor,
    deliveryIds: readonly string[],
  ): Promise<Array<WebhookAttempt & { deliveryId: string }>> {
    if (deliveryIds.length === 0) return [];
    return db
      .select({
        deliveryId: webhookAttempts.deliveryId,
        attemptNumber: webhookAttempts.attemptNumber,
        startedAt: webhookAttempts.startedAt,
        durationMs: webhookAttempts.durationMs,
        statusCode: webhookAttempts.statusCode,
        error: webhookAttempts.error,
        responseSnippet: webhookAttempts.responseSnippet,
        manual: webhookAttempts.manual,
      })
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, [...deliveryIds]))
      .orderBy(webhookAttempts.attemptNumber);
  },
};
