import { boolean, integer, jsonb, pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * One run of the ledger invariant check: every account's cached balance equals the sum of its
 * entries, and every posting's entries sum to zero. Kept per run so the latest result can be read
 * by the admin CLI and a metrics gauge in any process.
 */
export const ledgerCheckRuns = pgTable('ledger_check_runs', {
  id: uuid('id').primaryKey().defaultRandom(),
  startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }).notNull(),
  ok: boolean('ok').notNull(),
  accountsChecked: integer('accounts_checked').notNull(),
  postingsChecked: integer('postings_checked').notNull(),
  /** Up to the first 100 accounts whose cached balance differs: `{accountId, key, balance, entriesSum}` (kobo as strings). */
  mismatchedAccounts: jsonb('mismatched_accounts').notNull(),
  mismatchedAccountCount: integer('mismatched_account_count').notNull(),
  /** Up to the first 100 postings whose entries do not sum to zero: `{postingId, kind, reference, sum}`. */
  unbalancedPostings: jsonb('unbalanced_postings').notNull(),
  unbalancedPostingCount: integer('unbalanced_posting_count').notNull(),
});
