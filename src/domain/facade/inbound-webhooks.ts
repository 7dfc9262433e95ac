import { createHmac, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { facadeInboundSecrets } from '../../db/facade-schema.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { readKeyBinding, scheduleGapFill } from './gap-fill.js';
import { type InboundEnvelope, readEnvelope } from './inbound-envelope.js';
import type { UpstreamEventLog } from './upstream-event-log.js';

/** Where the upstream delivers one partner account's webhooks, as the partner is shown it. */
export interface UpstreamWebhookReceiver {
  url: string;
  /** When the secret was last set; null before one is. */
  secretSetAt: Date | null;
  /** Whether the gap-filling job has a read key to list the account's records with. */
  readKeySet: boolean;
  /** When the gap-filling job last listed the account's records; null before it has. */
  filledAt: Date | null;
}

/** What became of one inbound delivery that passed the signature check. */
export interface InboundOutcome {
  stored: boolean;
  eventId: string;
}

/** What the set-up takes: the upstream's webhook secret, and the key the gap-filling job lists with. */
export interface InboundSetup {
  secret: string;
  /** An upstream key of the same account (Read Only is enough); absent: the one set stays. */
  readKey?: string | null | undefined;
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
 * table as the gateway's own are, keeping the upstream's `id` (UpstreamEventLog): the relay stamps
 * it in commit order, and the event feed and webhook fan-out deliver it to that account only.
 */
export class InboundWebhooks {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly publicUrl: string,
    private readonly log: UpstreamEventLog,
    /** The local owner id of the account an upstream key acts for (inbound-owners.ts); undefined if refused. */
    private readonly ownerOfKey: (key: string) => Promise<string | undefined>,
  ) {
    this.idKey = secrets.deriveKey('facade-inbound-url');
  }

  private readonly idKey: Buffer;

  /**
   * Sets (or replaces) the caller's upstream webhook secret and, when given, the read key the
   * gap-filling job lists the account's records with; the job is queued in the same transaction.
   * The read key must act for the caller's own account upstream (asked before anything is
   * written), so nobody can have the facade list another account's records into theirs. The
   * inbound URL is the account's from the start (receiver), so it can be registered upstream
   * before the secret is known.
   */
  async register(principal: Principal, setup: InboundSetup): Promise<UpstreamWebhookReceiver> {
    const { secret, readKey } = setup;
    if (secret.length === 0 || secret.length > MAX_SECRET_LENGTH || secret.trim() !== secret)
      throw badInput(
        'secret',
        `secret must be the upstream's webhook secret as given at setup: 1-${MAX_SECRET_LENGTH} characters, no surrounding spaces.`,
      );
    if (readKey !== undefined && readKey !== null) await this.checkReadKey(principal, readKey);
    const now = this.clock.now();
    const id = this.inboundIdOf(principal);
    const sealed = this.secrets.seal(secret, bindingOf(id));
    const readKeySealed =
      readKey === undefined || readKey === null ? undefined : this.secrets.seal(readKey, readKeyBinding(id));
    const row = await this.db.transaction(async (tx) => {
      const [written] = await tx
        .insert(facadeInboundSecrets)
        .values({
          id,
          userId: principal.userId,
          environment: principal.environment,
          secretSealed: sealed,
          ...(readKeySealed ? { readKeySealed } : {}),
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: facadeInboundSecrets.id,
          set: { secretSealed: sealed, ...(readKeySealed ? { readKeySealed } : {}), updatedAt: now },
        })
        .returning();
      if (readKeySealed) await scheduleGapFill(tx, { inboundId: id, userId: principal.userId }, now);
      return written!;
    });
    return this.receiverOf(id, row);
  }

  /** The caller's inbound URL, and whether (since when) its secret and read key are set. */
  async receiver(principal: Principal): Promise<UpstreamWebhookReceiver> {
    const id = this.inboundIdOf(principal);
    const [row] = await this.db.select().from(facadeInboundSecrets).where(eq(facadeInboundSecrets.id, id));
    return this.receiverOf(id, row);
  }

  private receiverOf(id: string, row: SecretRow | undefined): UpstreamWebhookReceiver {
    return {
      url: this.urlOf(id),
      secretSetAt: row?.updatedAt ?? null,
      readKeySet: Boolean(row?.readKeySealed),
      filledAt: row?.filledAt ?? null,
    };
  }

  private async checkReadKey(principal: Principal, readKey: string): Promise<void> {
    if (readKey.length === 0 || readKey.length > MAX_SECRET_LENGTH || readKey.trim() !== readKey)
      throw badInput(
        'readKey',
        `readKey must be an upstream API key: 1-${MAX_SECRET_LENGTH} characters, no surrounding spaces.`,
      );
    const owner = await this.ownerOfKey(readKey);
    if (owner !== principal.userId)
      throw badInput('readKey', 'readKey must be an upstream API key of this account that the upstream accepts.');
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
    return { stored: await this.log.take(owner, envelope, 'webhook'), eventId: envelope.id };
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
