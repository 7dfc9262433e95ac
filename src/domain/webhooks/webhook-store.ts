import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema.js';
import { toStoredEvent } from '../events/event-row.js';
import type { Environment } from '../auth/permissions.js';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook.js';

type EndpointRow = typeof webhookEndpoints.$inferSelect;

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

  async findDeliveryWithEndpointAndEvent(db: Executor, id: string) {
    const [row] = await db
      .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: events })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(eq(webhookDeliveries.id, id));
    return row ? { delivery: row.delivery, endpoint: row.endpoint, event: toStoredEvent(row.event) } : undefined;
  },

  async findDelivery(db: Executor, id: string): Promise<WebhookDelivery | undefined> {
    const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    return row;
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
