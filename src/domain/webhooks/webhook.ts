import type { Environment } from '../auth/permissions.js';

export interface WebhookEndpoint {
  id: string;
  userId: string;
  environment: Environment;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  /** Since when every attempt has failed; null while the endpoint is healthy. */
  failingSince: Date | null;
  /** When the previous secret stops signing, during a rotation. */
  secretRotationEndsAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookAttempt {
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseSnippet: string | null;
  manual: boolean;
}

/** A delivery as the API shows it; attempts are loaded when not already at hand. */
export interface WebhookDeliveryView extends WebhookDelivery {
  attempts?: WebhookAttempt[];
}

/** A delivery as an event's history shows it: the endpoint it went to, and every attempt. */
/** Where one event went: the delivery and its endpoint, without its attempts (a list's line). */
export interface EventDeliverySummary extends WebhookDelivery {
  endpointUrl: string;
  /** The endpoint was deleted since; its deliveries stay in the history. */
  endpointDeleted: boolean;
}

/** A delivery with every attempt, for the event's own page. */
export interface EventDelivery extends EventDeliverySummary {
  attempts: WebhookAttempt[];
}

/** The seed's retry schedule: delays after the 1st … 5th failed attempt, counted from that attempt. */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000] as const;

export const DELIVERY_JOB = 'webhook.deliver';
