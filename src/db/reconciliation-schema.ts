import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { environmentEnum } from './schema.js';

/**
 * One reconciliation run: for one UTC day, each provider's own records were listed through its
 * adapter and matched against the gateway's. `sources` keeps, per provider, the counts, the
 * clearing balance past its settlement window, and the error when the provider could not be read.
 */
export const reconRuns = pgTable(
  'recon_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    /** The UTC day reconciled, YYYY-MM-DD. */
    businessDate: text('business_date').notNull(),
    /** daily (the scheduled job) or manual (the admin CLI). */
    trigger: text('trigger').notNull(),
    /** ok (everything matched), breaks, or failed (a provider could not be read). */
    outcome: text('outcome').notNull(),
    matched: integer('matched').notNull(),
    breaks: integer('breaks').notNull(),
    /** Per provider: `{provider, ours, theirs, matched, breaks, clearingMinor, clearingCurrency, error?}`. */
    sources: jsonb('sources').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('recon_runs_finished_idx').on(t.finishedAt)],
);

/**
 * An item that did not match: missing_ours (the provider has it, the gateway does not),
 * missing_theirs, amount_differs or status_differs. A break found again by a later run stays one
 * row (`lastRunId` moves on); one no longer found is `cleared`; an operator may `resolve` it with a
 * note. Amounts are minor units as decimal text (kobo, or a token's base units).
 */
export const reconBreaks = pgTable(
  'recon_breaks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    provider: text('provider').notNull(),
    businessDate: text('business_date').notNull(),
    /** deposit | payout | bill | offramp_order | chain_transfer */
    itemType: text('item_type').notNull(),
    /** The reference the provider knows the item by (a transaction's signature on chain). */
    reference: text('reference').notNull(),
    kind: text('kind').notNull(),
    currency: text('currency').notNull(),
    ourAmount: text('our_amount'),
    theirAmount: text('their_amount'),
    ourStatus: text('our_status'),
    theirStatus: text('their_status'),
    detail: jsonb('detail'),
    /** open | cleared (a later run matched it) | resolved (an operator acknowledged it) */
    status: text('status').notNull().default('open'),
    firstRunId: uuid('first_run_id')
      .notNull()
      .references(() => reconRuns.id),
    lastRunId: uuid('last_run_id')
      .notNull()
      .references(() => reconRuns.id),
    /** When a run first found it: what "aged" is measured from. */
    detectedAt: timestamp('detected_at', { withTimezone: true, mode: 'date' }).notNull(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true, mode: 'date' }),
    resolutionNote: text('resolution_note'),
  },
  (t) => [
    // One open break per item and kind: a rerun of the same day finds the row instead of adding one.
    uniqueIndex('recon_breaks_open_key')
      .on(t.environment, t.provider, t.itemType, t.reference, t.kind)
      .where(sql`${t.status} = 'open'`),
    index('recon_breaks_status_idx').on(t.status, t.detectedAt),
  ],
);
