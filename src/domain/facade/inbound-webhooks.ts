import { createHmac, timingSafeEqual } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { type Database, queryRows } from '../../db/client.js';
import { facadeInboundSecrets } from '../../db/facade-schema.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { eventTraceContext } from '../events/outbox.js';
import { hintRelays } from '../events/relay.js';
import { isUuid } from '../ids.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { type InboundEnvelope, readEnvelope } from './inbound-envelope.js';

/** Where the upstream delivers one partner account's webhooks, as the partner is shown it. */
export interface UpstreamWebhookReceiver {
  url: string;
  /** When the secret was last set; null before one is. */
  secretSetAt: Date | null;
}

/** What became of one inbound delivery that passed the signature check. */
export interface InboundOutcome {
  stored: boolean;
  eventId: string;
}

/** The longest secret taken: the spec gives no format, and dashboards' secrets are tens of characters. */
const MAX_SECRET_LENGTH = 512;

/** The path of an account's inbound URL; `:id` is its row's id (facade-schema.ts). */
export const INBOUND_PATH = '/webhooks/upstream';

type SecretRow = typeof facadeInboundSecrets.$inferSelect;

const bindingOf = (id: string) => `facade-inbound:${id}`;

/**
 * Facade mode's event source: each partner account's webhooks from the upstream. The partner gives
 * the facade its upstream webhook secret (proving the account is its own with an upstream key, as
 * every facade caller does) and registers the facade's inbound URL upstream. Each delivery is then
 * checked against that secret on the exact bytes received, and its event is written to the events
 * table as the gateway's own are, keeping the upstream's `id`: the relay stamps it in commit order,
 * and the event feed and webhook fan-out deliver it to that account only.
 */
export class InboundWebhooks {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly publicUrl: string,
  ) {
    this.idKey = secrets.deriveKey('facade-inbound-url');
  }

  private readonly idKey: Buffer;

  /**
   * Sets (or replaces) the caller's upstream webhook secret. The inbound URL is the account's
   * from the start (receiver), so it can be registered upstream before the secret is known.
   */
  async register(principal: Principal, secret: string): Promise<UpstreamWebhookReceiver> {
    if (secret.length === 0 || secret.length > MAX_SECRET_LENGTH || secret.trim() !== secret)
      throw badInput(
        'secret',
        `secret must be the upstream's webhook secret as given at setup: 1-${MAX_SECRET_LENGTH} characters, no surrounding spaces.`,
      );
    const now = this.clock.now();
    const id = this.inboundIdOf(principal);
    const sealed = this.secrets.seal(secret, bindingOf(id));
    const [row] = await this.db
      .insert(facadeInboundSecrets)
      .values({
        id,
        userId: principal.userId,
        environment: principal.environment,
        secretSealed: sealed,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({ target: facadeInboundSecrets.id, set: { secretSealed: sealed, updatedAt: now } })
      .returning();
    return { url: this.urlOf(id), secretSetAt: row!.updatedAt };
  }

  /** The caller's inbound URL, and whether (since when) its secret is set. */
  async receiver(principal: Principal): Promise<UpstreamWebhookReceiver> {
    const id = this.inboundIdOf(principal);
    const [row] = await this.db
      .select({ updatedAt: facadeInboundSecrets.updatedAt })
      .from(facadeInboundSecrets)
      .where(eq(facadeInboundSecrets.id, id));
    return { url: this.urlOf(id), secretSetAt: row?.updatedAt ?? null };
  }

  /**
   * One delivery from the upstream to an account's inbound URL. The signature is checked before
   * the body is read at all (401, nothing stored), in constant time; then the envelope, whose
   * event is written once: a repeat of an `id` already stored for the account changes nothing.
   */
  async receive(inboundId: string, body: Buffer, signatures: readonly (string | undefined)[]): Promise<InboundOutcome> {
    const [row] = isUuid(inboundId)
      ? await this.db.select().from(facadeInboundSecrets).where(eq(facadeInboundSecrets.id, inboundId))
      : [];
    if (!row) throw notFound('Inbound webhook URL');
    const secret = this.secrets.open(row.secretSealed, bindingOf(row.id));
    if (!signatures.some((signature) => signatureMatches(body, signature, secret)))
      throw new DomainError('UNAUTHENTICATED', 'The x-service-signature header does not match the body.');
    const envelope = readEnvelope(body, this.clock.now());
    return this.store(row, envelope);
  }

  private async store(owner: SecretRow, envelope: InboundEnvelope): Promise<InboundOutcome> {
    const [inserted] = await queryRows<{ id: string }>(
      this.db,
      sql`insert into events (type, user_id, environment, data, created_at, trace_context, source_id)
        values (${envelope.type}, ${owner.userId}, ${owner.environment}, ${JSON.stringify(envelope.data)}::jsonb,
          ${envelope.created.toISOString()}::timestamptz, ${eventTraceContext()}::jsonb, ${envelope.id})
        on conflict (user_id, environment, source_id) where source_id is not null do nothing
        returning id`,
    );
    if (!inserted) return { stored: false, eventId: envelope.id };
    hintRelays();
    return { stored: true, eventId: envelope.id };
  }

  /**
   * The id of an account's inbound URL: an HMAC of its owner under a key of its own, shaped as a
   * UUID. Known before any row exists, the same on every instance, and not to be guessed from the
   * account's id (the signature check is what keeps others out; this keeps the URLs from naming
   * who uses the facade).
   */
  private inboundIdOf(principal: Principal): string {
    const mac = createHmac('sha256', this.idKey).update(`${principal.userId}\0${principal.environment}`).digest();
    mac[6] = (mac[6]! & 0x0f) | 0x80;
    mac[8] = (mac[8]! & 0x3f) | 0x80;
    const hex = mac.subarray(0, 16).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  private urlOf(id: string): string {
    return `${this.publicUrl}${INBOUND_PATH}/${id}`;
  }
}

/**
 * The spec's check: `x-service-signature` is the hex HMAC-SHA-256 of the body keyed with the
 * secret. Compared as bytes in constant time; a header that is not 64 hex digits never matches.
 */
export function signatureMatches(body: Buffer, signature: string | undefined, secret: string): boolean {
  if (!signature || !/^[0-9a-fA-F]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}
