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
 * Headers for one attempt: the seed's `x-service-signature`, and the Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
 *
 * During a rotation's grace period a receiver still holding the old secret keeps verifying
 * unchanged: `x-service-signature` stays keyed with the previous secret until the grace ends, and
 * the new secret's signature travels beside it in `x-service-signature-next`; `webhook-signature`
 * carries one signature per live secret. After the grace, `x-service-signature` uses the new secret
 * and the `-next` header is gone. A receiver may switch to the new secret at any time during the
 * grace by accepting either header.
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
  const rotating: Record<string, string> = input.previousSecret
    ? {
        'x-service-signature': serviceSignature(input.body, input.previousSecret),
        'x-service-signature-next': serviceSignature(input.body, input.secret),
      }
    : { 'x-service-signature': serviceSignature(input.body, input.secret) };
  return {
    ...rotating,
    'webhook-id': input.eventId,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
