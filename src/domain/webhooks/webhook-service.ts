import { randomUUID } from 'node:crypto';
import { readsOf } from '../../db/pool-routing.js';
import { type AuditChanges, diffOf, recordAudit } from '../audit/audit-log.js';
import type { Database, Executor } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, notFound } from '../errors.js';
import { checkFieldsAwaiting } from '../field-checks.js';
import { isUuid } from '../ids.js';
import { visibleTo } from '../events/event-service.js';
import { ADDRESSED_KINDS } from '../events/fan-out.js';
import { eventStore, recordEvent } from '../events/outbox.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { ALL_KINDS, EVENT_KINDS } from './event-kinds.js';
import type { SecretBox } from './secret-box.js';
import { generateWebhookSecret } from './signing.js';
import { validateWebhookUrl } from './url-policy.js';
import { assertResolvesPublic, type ResolutionOptions } from './url-resolution.js';
import {
  DELIVERY_JOB,
  type EventDelivery,
  type EventDeliverySummary,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './webhook.js';
import { toEndpoint, webhookStore } from './webhook-store.js';

export interface EndpointInput {
  url?: string | null;
  eventTypes?: readonly string[] | null;
  description?: string | null;
  enabled?: boolean | null;
}

export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  /** Shown once. */
  secret: string;
}

export const MAX_ENDPOINTS = 20;
/** What an audit record says of an endpoint's changes (its secret only as "changed"). */
const AUDITED_FIELDS = ['url', 'description', 'eventTypes', 'enabled'] as const;
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;

/** What a sealed secret is bound to: a ciphertext moved to another row or user fails to open. */
export const secretBinding = (endpoint: { id: string; userId: string }) =>
  `webhook-secret:${endpoint.id}:${endpoint.userId}`;

function checkEventTypes(types: readonly string[]): string[] {
  const unique = [...new Set(types.map((t) => t.trim()))];
  if (unique.length === 0)
    throw badInput('eventTypes', 'eventTypes must name at least one event kind, or "*" for all.');
  const unknown = unique.filter((t) => t !== ALL_KINDS && !(EVENT_KINDS as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw badInput('eventTypes', `Unknown event kinds: ${unknown.join(', ')}. Known: ${EVENT_KINDS.join(', ')}.`);
  return unique;
}

/** Webhook endpoints of the caller's account and environment, and their delivery log. */
export class WebhookService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    /** Sandbox endpoints may be http and local (development only): see url-policy.ts. */
    private readonly localReceivers = true,
    /** How a URL's host name is resolved when saved with local receivers off (tests point names anywhere). */
    private readonly resolution: ResolutionOptions = {},
  ) {}

  /**
   * A URL as it is stored. With local receivers off (every production server) its host name must
   * resolve to public addresses only, checked before anything is written.
   */
  private async checkedUrl(raw: string, environment: Principal['environment']): Promise<string> {
    const url = validateWebhookUrl(raw, environment, this.localReceivers);
    if (!this.localReceivers) await assertResolvesPublic(url, this.resolution);
    return url.toString();
  }

  async create(principal: Principal, input: EndpointInput): Promise<EndpointWithSecret> {
    const { url, eventTypes } = await checkFieldsAwaiting({
      url: () => {
        if (!input.url) throw badInput('url', 'url is required.');
        return this.checkedUrl(input.url, principal.environment);
      },
      eventTypes: () => checkEventTypes(input.eventTypes ?? [ALL_KINDS]),
    });
    if ((await webhookStore.listOwnedEndpoints(this.db, principal)).length >= MAX_ENDPOINTS) {
      throw badInput('url', `An account may have at most ${MAX_ENDPOINTS} webhook endpoints per environment.`);
    }
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const row = await this.db.transaction(async (tx) => {
      const inserted = await webhookStore.insertEndpoint(tx, {
        id,
        userId: principal.userId,
        environment: principal.environment,
        url,
        description: input.description ?? null,
        eventTypes,
        enabled: input.enabled ?? true,
        secretSealed: this.secrets.seal(secret, secretBinding({ id, userId: principal.userId })),
      });
      await this.audit(tx, principal, 'webhook_endpoint.created', id, {
        ...diffOf(null, inserted, AUDITED_FIELDS),
        secret: { changed: true },
      });
      return inserted;
    });
    return { endpoint: toEndpoint(row), secret };
  }

  async list(principal: Principal): Promise<WebhookEndpoint[]> {
    return (await webhookStore.listOwnedEndpoints(this.db, principal)).map(toEndpoint);
  }

  async get(principal: Principal, id: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.owned(principal, id));
  }

  async update(principal: Principal, id: string, input: EndpointInput): Promise<WebhookEndpoint> {
    const before = await this.owned(principal, id);
    const changes: Parameters<typeof webhookStore.updateEndpoint>[2] = { updatedAt: this.clock.now() };
    if (input.url != null) changes.url = await this.checkedUrl(input.url, principal.environment);
    if (input.eventTypes != null) changes.eventTypes = checkEventTypes(input.eventTypes);
    if (input.description !== undefined) changes.description = input.description;
    if (input.enabled != null) {
      changes.enabled = input.enabled;
      if (input.enabled) changes.disabledReason = null;
    }
    return this.db.transaction(async (tx) => {
      const updated = await webhookStore.updateEndpoint(tx, id, changes);
      await this.audit(tx, principal, 'webhook_endpoint.updated', id, diffOf(before, updated, AUDITED_FIELDS));
      return toEndpoint(updated);
    });
  }

  async remove(principal: Principal, id: string): Promise<WebhookEndpoint> {
    const before = await this.owned(principal, id);
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const removed = await webhookStore.updateEndpoint(tx, id, { deletedAt: now, enabled: false, updatedAt: now });
      await this.audit(tx, principal, 'webhook_endpoint.deleted', id, diffOf(before, null, AUDITED_FIELDS));
      return toEndpoint(removed);
    });
  }

  /** A new secret; the old one keeps signing (as a second `webhook-signature`) for the grace period. */
  async rotateSecret(
    principal: Principal,
    id: string,
    graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
  ): Promise<EndpointWithSecret> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > 7 * 24 * 3600) {
      throw badInput('gracePeriodSeconds', 'gracePeriodSeconds must be between 0 and 604800 (7 days).');
    }
    const row = await this.owned(principal, id);
    const secret = generateWebhookSecret();
    const now = this.clock.now();
    const updated = await this.db.transaction(async (tx) => {
      const rotated = await webhookStore.updateEndpoint(tx, id, {
        secretSealed: this.secrets.seal(secret, secretBinding(row)),
        previousSecretSealed: graceSeconds > 0 ? row.secretSealed : null,
        previousSecretExpiresAt: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
        updatedAt: now,
      });
      await this.audit(tx, principal, 'webhook_endpoint.secret_rotated', id, {
        secret: { changed: true },
        gracePeriodSeconds: { to: graceSeconds },
      });
      return rotated;
    });
    return { endpoint: toEndpoint(updated), secret };
  }

  /** The endpoint's current signing secret, for its owner (the dashboard's reveal). */
  async revealSecret(principal: Principal, id: string): Promise<string> {
    const row = await this.owned(principal, id);
    await this.audit(this.db, principal, 'webhook_endpoint.secret_revealed', id, {});
    return this.secrets.open(row.secretSealed, secretBinding(row));
  }

  private audit(tx: Executor, principal: Principal, action: string, id: string, changes: AuditChanges) {
    return recordAudit(
      tx,
      {
        userId: principal.userId,
        environment: principal.environment,
        action,
        targetType: 'webhook_endpoint',
        targetId: id,
        changes,
        principal,
      },
      this.clock.now(),
    );
  }

  /** The most recent deliveries of an endpoint, newest first, each with its attempts. */
  async deliveries(
    principal: Principal,
    endpointId: string,
    first = 50,
  ): Promise<Array<WebhookDelivery & { attempts: WebhookAttempt[] }>> {
    if (!Number.isInteger(first) || first < 1 || first > 200)
      throw badInput('first', 'first must be between 1 and 200.');
    await this.owned(principal, endpointId);
    const deliveries = await webhookStore.listDeliveries(readsOf(this.db), endpointId, first);
    const attempts = await webhookStore.listAttempts(
      readsOf(this.db),
      deliveries.map((d) => d.id),
    );
    const publicIds = await webhookStore.publicEventIds(
      readsOf(this.db),
      deliveries.map((d) => d.eventId),
    );
    return deliveries.map((d) => ({
      ...d,
      eventId: publicIds.get(d.eventId) ?? d.eventId,
      attempts: attempts.filter((a) => a.deliveryId === d.id).map(({ deliveryId: _drop, ...a }) => a),
    }));
  }

  async attemptsOf(deliveryId: string): Promise<WebhookAttempt[]> {
    return (await webhookStore.listAttempts(this.db, [deliveryId])).map(({ deliveryId: _drop, ...a }) => a);
  }

  /** Sends a delivery again now, whatever its state; the retry schedule is not changed. */
  async resend(principal: Principal, deliveryId: string): Promise<WebhookDelivery> {
    const delivery = isUuid(deliveryId) ? await webhookStore.findDelivery(this.db, deliveryId) : undefined;
    if (!delivery) throw notFound('Webhook delivery');
    await this.owned(principal, delivery.endpointId).catch(() => {
      throw notFound('Webhook delivery');
    });
    await enqueueJob(this.db, {
      kind: DELIVERY_JOB,
      payload: { deliveryId, manual: true },
      runAt: this.clock.now(),
      tenant: principal.userId,
      concurrencyKey: delivery.endpointId,
    });
    const publicIds = await webhookStore.publicEventIds(this.db, [delivery.eventId]);
    return { ...delivery, eventId: publicIds.get(delivery.eventId) ?? delivery.eventId };
  }

  /**
   * Where each of the caller's events went, for a list: one query for the page, attempts left out
   * (re-sends can make them many; the list shows each delivery's count).
   */
  async deliverySummariesOfEvents(
    principal: Principal,
    eventIds: readonly string[],
  ): Promise<Map<string, EventDeliverySummary[]>> {
    const deliveries = await webhookStore.listDeliveriesOfEvents(readsOf(this.db), principal, eventIds);
    const byEvent = new Map<string, EventDeliverySummary[]>();
    for (const d of deliveries) byEvent.set(d.eventId, [...(byEvent.get(d.eventId) ?? []), d]);
    return byEvent;
  }

  /** Every delivery of one of the caller's events with every attempt, for the event's page. */
  async deliveriesOfEvent(principal: Principal, eventId: string): Promise<EventDelivery[]> {
    const reads = readsOf(this.db);
    const deliveries = await webhookStore.listDeliveriesOfEvents(reads, principal, [eventId]);
    const attempts = await webhookStore.listAttempts(
      reads,
      deliveries.map((d) => d.id),
    );
    return deliveries.map((d) => ({
      ...d,
      attempts: attempts.filter((a) => a.deliveryId === d.id).map(({ deliveryId: _drop, ...a }) => a),
    }));
  }

  /**
   * Sends one of the caller's events to one of their endpoints again, through the delivery jobs.
   * An endpoint that has a delivery of the event gets that delivery re-sent (a manual attempt, as
   * `resend`); one that never got it (added or subscribed after the event was fanned out) gets a
   * new delivery with the usual retry schedule, provided it is enabled and subscribed to the kind.
   */
  async resendEvent(
    principal: Principal,
    eventId: string,
    endpointId: string,
  ): Promise<{ delivery: WebhookDelivery; created: boolean }> {
    const event = isUuid(eventId) ? await eventStore.findEventById(this.db, eventId) : undefined;
    if (!event || !visibleTo(event, principal)) throw notFound('Event');
    const endpoint = toEndpoint(await this.owned(principal, endpointId));
    const existing = await webhookStore.findDeliveryOf(this.db, event.id, endpoint.id);
    if (existing) return { delivery: await this.resend(principal, existing.id), created: false };
    if ((ADDRESSED_KINDS as readonly string[]).includes(event.type))
      throw badInput('endpointId', `A ${event.type} event goes only to the endpoint it was sent to.`);
    if (!endpoint.enabled) throw badInput('endpointId', 'The endpoint is disabled: enable it first.');
    if (!endpoint.eventTypes.includes(ALL_KINDS) && !endpoint.eventTypes.includes(event.type))
      throw badInput('endpointId', `The endpoint is not subscribed to ${event.type}.`);
    const now = this.clock.now();
    const created = await this.db.transaction(async (tx) => {
      const delivery = await webhookStore.insertDeliveryUnlessPresent(tx, endpoint.id, event.id, now);
      if (delivery)
        await enqueueJob(tx, {
          kind: DELIVERY_JOB,
          payload: { deliveryId: delivery.id },
          runAt: now,
          tenant: principal.userId,
          concurrencyKey: endpoint.id,
        });
      return delivery;
    });
    if (created) return { delivery: created, created: true };
    // Written meanwhile (fan-out, or a re-send beside this one): re-send that delivery instead.
    const raced = await webhookStore.findDeliveryOf(this.db, event.id, endpoint.id);
    if (!raced) throw notFound('Webhook delivery');
    return { delivery: await this.resend(principal, raced.id), created: false };
  }

  /**
   * Sends a `webhook.test` event to this endpoint only: its delivery and job are written here, with
   * the event, and the relay's fan-out passes the kind by (fan-out.ts `ADDRESSED_KINDS`).
   */
  async sendTest(principal: Principal, endpointId: string): Promise<WebhookDelivery> {
    const endpoint = await this.owned(principal, endpointId);
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const event = await recordEvent(
        tx,
        {
          type: 'webhook.test',
          userId: principal.userId,
          environment: principal.environment,
          data: { endpointId, message: 'This is a test event from Partner Gateway.' },
        },
        now,
      );
      const delivery = await webhookStore.insertDelivery(tx, endpoint.id, event.id, now);
      await enqueueJob(tx, {
        kind: DELIVERY_JOB,
        payload: { deliveryId: delivery.id },
        runAt: now,
        tenant: principal.userId,
        concurrencyKey: endpoint.id,
      });
      return delivery;
    });
  }

  private async owned(principal: Principal, id: string) {
    const row = isUuid(id) ? await webhookStore.findOwnedEndpoint(this.db, principal, id) : undefined;
    if (!row) throw notFound('Webhook endpoint');
    return row;
  }
}
