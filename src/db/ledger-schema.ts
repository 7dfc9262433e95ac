import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, kobo } from './columns.js';
import { environmentEnum, ownerColumns, users } from './schema.js';

/**
 * The money core's tables: the double-entry ledger (accounts, postings, entries, holds) and the
 * Idempotency-Keys every keyed operation claims. Every domain's operations write them through
 * src/domain/ledger/ and src/domain/money/, which read no domain's tables: so they live here, not
 * beside the wallet's own.
 */

/**
 * A ledger account: a user's wallet or holds, or a system account (provider clearing, fees). The
 * balance is the sum of the account's entries, kept on the row so a debit checks and changes it in
 * one guarded UPDATE (never below zero unless the account may go negative).
 */
export const ledgerAccounts = pgTable(
  'ledger_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    /** Null for system accounts. */
    userId: uuid('user_id').references(() => users.id),
    /** wallet | holds | provider_clearing | fees */
    code: text('code').notNull(),
    /** environment:owner:code, one account each. */
    key: text('key').notNull(),
    balance: kobo('balance').notNull().default(sql`0`),
    allowNegative: boolean('allow_negative').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('ledger_accounts_key').on(t.key)],
);

/** One money movement: entries that sum to zero. `reference` is unique per kind, so a movement happens once. */
export const ledgerPostings = pgTable(
  'ledger_postings',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    kind: text('kind').notNull(),
    reference: text('reference').notNull(),
    description: text('description'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('ledger_postings_kind_reference_key').on(t.environment, t.kind, t.reference)],
);

/**
 * Posted entries never change (a trigger refuses UPDATE and DELETE); corrections are reversals.
 * Each posting's entries are two or more and sum to zero, checked by the database when the
 * transaction that writes them commits (migration 0031, `ledger_postings_balanced`).
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    postingId: uuid('posting_id')
      .notNull()
      .references(() => ledgerPostings.id),
    accountId: uuid('account_id')
      .notNull()
      .references(() => ledgerAccounts.id),
    /** Kobo; positive credits the account, negative debits it. */
    amount: kobo('amount').notNull(),
    /** The account's balance after this entry. */
    balanceAfter: kobo('balance_after').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('ledger_entries_account_idx').on(t.accountId, t.createdAt),
    // The balance guard (migration 0031) sums a posting's entries at every commit that writes one.
    index('ledger_entries_posting_idx').on(t.postingId),
  ],
);

export const holdStatusEnum = pgEnum('hold_status', ['held', 'captured', 'released']);

/**
 * Money reserved from a wallet (moved to the user's holds account) until captured or released, once.
 * A hold with an expiry that is still held then is released by the `hold.expire` job.
 */
export const ledgerHolds = pgTable(
  'ledger_holds',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    amount: kobo('amount').notNull(),
    reference: text('reference').notNull(),
    status: holdStatusEnum('status').notNull().default('held'),
    /** When an uncaptured hold gives the money back on its own; null: only its operation settles it. */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    /** The wallet transaction the hold pays for: it fails (with its event) when the hold expires. */
    transactionId: uuid('transaction_id'),
    createdAt: createdAt(),
    settledAt: timestamp('settled_at', { withTimezone: true, mode: 'date' }),
  },
  // No index on the expiry: each hold with one enqueues its own `hold.expire` job, due then.
);

export const idempotencyStatusEnum = pgEnum('idempotency_status', ['running', 'done']);

/**
 * One Idempotency-Key of one owner and operation. Claimed with a lease before the work; finished
 * (with the response to replay) in the same transaction as the work's effect.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    ...ownerColumns(),
    operation: text('operation').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    status: idempotencyStatusEnum('status').notNull().default('running'),
    /** The record the work created, so a takeover after a crash resumes instead of repeating it. */
    resourceId: text('resource_id'),
    response: jsonb('response'),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_pk').on(t.userId, t.environment, t.operation, t.key),
    /** Retention prunes by age. */
    index('idempotency_keys_created_idx').on(t.createdAt),
  ],
);
