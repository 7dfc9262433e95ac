import { sql } from 'drizzle-orm';
import { pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { ownerColumns } from './schema.js';

/**
 * Facade mode: the upstream webhook secret of each partner account (and environment), and the id
 * its inbound URL carries (`/webhooks/upstream/<id>`), where the upstream delivers that account's
 * events. The secret is sealed as webhook endpoints' are (SecretBox), bound to this row's id. The
 * read key, when the partner gives one, is the upstream key the gap-filling job lists the
 * account's records with (domain/facade/gap-fill.ts), sealed the same way.
 */
export const facadeInboundSecrets = pgTable(
  'facade_inbound_secrets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    secretSealed: text('secret_sealed').notNull(),
    readKeySealed: text('read_key_sealed'),
    /** When the gap-filling job last listed the account's records to the end of its window. */
    filledAt: timestamp('filled_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('facade_inbound_secrets_owner_key').on(t.userId, t.environment)],
);

/**
 * Facade mode: what the facade knows of each upstream record its events name (a bill, deposit or
 * offramp order, by `data.reference`): the kind of event that set its state, when, every kind
 * already taken for it and those the gap-filling job took. A kind found by the job and one the
 * upstream's webhook brought are one event (the job cannot know the webhook's `id`), but two
 * webhooks are told apart by their `id` alone. The state moves only to an event newer than the one
 * that set it: an older one is kept in the log but leaves the record where it is.
 */
export const facadeRecordStates = pgTable(
  'facade_record_states',
  {
    ...ownerColumns(),
    /** The event group: `bill`, `deposit` or `offramp`. */
    recordGroup: text('record_group').notNull(),
    reference: text('reference').notNull(),
    /** The kind of the newest event taken for the record (`deposit.completed`). */
    stateKind: text('state_kind').notNull(),
    /** That event's `created`. */
    stateAt: timestamp('state_at', { withTimezone: true }).notNull(),
    /** Every kind taken for the record, each once. */
    kindsTaken: text('kinds_taken').array().notNull(),
    /** The kinds among them the gap-filling job took: a webhook of one of these is a repeat. */
    kindsFilled: text('kinds_filled').array().notNull().default(sql`'{}'::text[]`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.environment, t.recordGroup, t.reference] })],
);
