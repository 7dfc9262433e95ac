import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { oauthClients } from './accounts-schema.js';
import { createdAt, kobo } from './columns.js';
import { apiKeys, environmentEnum, userRef } from './schema.js';

/**
 * A key's own payout limits and IP allow-list. No row, or a null column, means the configured
 * default (see docs/payout-controls.md); an empty allow-list is no allow-list.
 */
export const apiKeyControls = pgTable('api_key_controls', {
  apiKeyId: uuid('api_key_id')
    .primaryKey()
    .references(() => apiKeys.id, { onDelete: 'cascade' }),
  maxPayoutKobo: kobo('max_payout_kobo'),
  maxDailyKobo: kobo('max_daily_kobo'),
  maxDailyCount: integer('max_daily_count'),
  maxHourlyCount: integer('max_hourly_count'),
  /** CIDRs (IPv4 and IPv6), as entered after normalising. */
  ipAllowList: text('ip_allow_list').array(),
  /** GraphQL over /graphql and WebSocket runs only the key's trusted documents (docs/graphql.md). */
  trustedDocumentsOnly: boolean('trusted_documents_only').notNull().default(false),
  /** The key's own GraphQL cost and depth limits, at most the gateway's; null = the gateway's. */
  graphqlMaxCost: integer('graphql_max_cost'),
  graphqlMaxDepth: integer('graphql_max_depth'),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/**
 * Which credential asked for each payout, for the per-key velocity limits (the payout row itself
 * does not say). Written in the payout's holding transaction; a payout that later failed stops
 * counting through the join on its reference.
 */
export const payoutKeyUsage = pgTable(
  'payout_key_usage',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    credentialId: text('credential_id').notNull(),
    userId: userRef(),
    environment: environmentEnum('environment').notNull(),
    reference: text('reference').notNull(),
    amount: kobo('amount').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('payout_key_usage_credential_idx').on(t.credentialId, t.createdAt)],
);

export type ApiKeyControlsRow = typeof apiKeyControls.$inferSelect;

/**
 * The GraphQL documents one credential (an API key or a Connect app) may run when its
 * trusted-documents switch is on: each as registered, keyed by the SHA-256 of its exact text (what
 * Apollo's persisted queries and the client preset's persisted-documents manifest send), with the
 * SHA-256 of its canonical print (graphql-js `print`), which a request sending the text in another
 * layout is matched by. Exactly one of api_key_id and app_id is set.
 */
export const trustedDocuments = pgTable(
  'trusted_documents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    apiKeyId: uuid('api_key_id').references(() => apiKeys.id, { onDelete: 'cascade' }),
    appId: uuid('app_id').references(() => oauthClients.id, { onDelete: 'cascade' }),
    /** Lowercase hex SHA-256 of `body`. */
    hash: text('hash').notNull(),
    canonicalHash: text('canonical_hash').notNull(),
    body: text('body').notNull(),
    operationName: text('operation_name'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('trusted_documents_key_hash_key').on(t.apiKeyId, t.hash),
    uniqueIndex('trusted_documents_app_hash_key').on(t.appId, t.hash),
    check('trusted_documents_one_credential', sql`num_nonnulls(${t.apiKeyId}, ${t.appId}) = 1`),
  ],
);
