import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret in the Standard Webhooks form: whsec_ + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The seed's signature: hex HMAC-SHA-256 of the exact body, keyed with the secret as given at setup. */
export function serviceSignature(body: string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * Headers for one attempt: `x-service-signature` with the current secret, and the Standard
 * Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). During a rotation
 * `webhook-signature` carries a signature per live secret, so receivers can switch at leisure.
 */
export function signatureHeaders(input: {
  eventId: string;
  body: string;
  at: Date;
  secret: string;
  previousSecret?: string | null;
}): Record<string, string> {
  const signatures = [input.secret, ...(input.previousSecret ? [input.previousSecret] : [])].map((secret) =>
    new Webhook(secret).sign(input.eventId, input.at, input.body),
  );
  return {
    'x-service-signature': serviceSignature(input.body, input.secret),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
