import {
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { environmentEnum } from './schema.js';

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

/**
 * Who changed what on an account: keys, webhooks, payment methods, customers. Append-only (a
 * trigger refuses UPDATE and DELETE; the application role lacks them) and hash-chained in `seq`
 * order: each record's hash covers its content and the previous record's hash, so an edited or
 * removed record breaks the chain (`npm run admin -- audit-verify`). Never holds a secret.
 */
export const auditRecords = pgTable(
  'audit_records',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Chain order: strictly increasing, gaps allowed (a rolled-back insert uses a number). */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    /** The account the change belongs to (its owner reads it). */
    userId: uuid('user_id').notNull(),
    environment: environmentEnum('environment'),
    /** api_key | oauth_token | session | system */
    actorKind: text('actor_kind').notNull(),
    /** The key's, token's or session's id; null for system (admin CLI). */
    actorId: text('actor_id'),
    /** e.g. api_key.created, webhook_endpoint.secret_rotated */
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    /** Field → { from, to }, secrets left out (only "changed" is said of them). */
    changes: jsonb('changes').notNull(),
    ip: text('ip'),
    userAgent: text('user_agent'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [uniqueIndex('audit_records_seq_key').on(t.seq), index('audit_records_owner_idx').on(t.userId, t.createdAt)],
);
