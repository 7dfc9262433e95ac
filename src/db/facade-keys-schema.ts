import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { environmentEnum } from './schema.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Facade mode: one row per Idempotency-Key of a GraphQL mutation sent to the upstream
 * (domain/facade/facade-keys.ts). The owner is the facade's local owner id of the upstream user;
 * no foreign key, so a row is written even when that owner's row could not be (inbound-owners.ts).
 *
 * `state`: `in_flight` (sent, no answer yet; `lease_until` says how long that may last before the
 * sender is taken for dead), `succeeded` or `failed` (`answer` is what every retry replays), or
 * `unknown` (the upstream did not answer in time or in shape: the facade never sends it again;
 * the matcher job looks for it upstream, and `queued_at` is set when it goes to the operator).
 */
export const facadeKeys = pgTable(
  'facade_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    environment: environmentEnum('environment').notNull(),
    operation: text('operation').notNull(),
    key: text('key').notNull(),
    /** HMAC of the input (idempotency.ts fingerprintOf): card secrets left out. */
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['in_flight', 'succeeded', 'failed', 'unknown'] }).notNull(),
    /** The stored answer (money/key-claim.ts `Stored`), set with `succeeded` and `failed`. */
    answer: jsonb('answer'),
    /** Whether the route's upstream honours Idempotency-Key, as configured when it was sent. */
    keyed: boolean('keyed').notNull(),
    /** What the matcher looks for upstream (the bill's type, customer, amount, reference), never a secret. */
    match: jsonb('match'),
    /** The caller's credential, sealed, kept only while the outcome is unknown (the matcher asks with it). */
    credentialSealed: text('credential_sealed'),
    sentAt: at('sent_at').notNull(),
    leaseUntil: at('lease_until'),
    /** Set when the matcher gave up: the record is in the operator queue. */
    queuedAt: at('queued_at'),
    resolvedAt: at('resolved_at'),
    /** `upstream` (its answer), `retry` (a keyed retry's answer), `matcher`, or `operator`. */
    resolvedBy: text('resolved_by'),
    resolutionNote: text('resolution_note'),
    /** The upstream record the matcher or operator took as this operation's, at most once per owner. */
    matchedReference: text('matched_reference'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('facade_keys_key').on(t.userId, t.environment, t.operation, t.key),
    uniqueIndex('facade_keys_matched_reference')
      .on(t.userId, t.environment, t.matchedReference)
      .where(sql`matched_reference is not null`),
    index('facade_keys_unknown').on(t.sentAt).where(sql`state = 'unknown'`),
  ],
);
