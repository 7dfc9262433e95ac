import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
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
