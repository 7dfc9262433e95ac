import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, kobo, updatedAt } from './columns.js';
import { environmentEnum, ownerColumns, users } from './schema.js';

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

export const transactionTypeEnum = pgEnum('wallet_transaction_type', [
  'DEPOSIT',
  'WITHDRAWAL',
  'TRANSFER_IN',
  'TRANSFER_OUT',
  'BILL',
]);
export const transactionStatusEnum = pgEnum('wallet_transaction_status', ['PENDING', 'COMPLETED', 'FAILED']);

/** What a user sees of money moving in and out of the NGN wallet. */
export const walletTransactions = pgTable(
  'wallet_transactions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    type: transactionTypeEnum('type').notNull(),
    status: transactionStatusEnum('status').notNull(),
    amount: kobo('amount').notNull(),
    fee: kobo('fee').notNull().default(sql`0`),
    currency: text('currency').notNull().default('NGN'),
    reference: text('reference').notNull(),
    description: text('description'),
    /** The other side: a user id for transfers, a bank account for payouts, a method for deposits. */
    counterparty: jsonb('counterparty'),
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('wallet_transactions_owner_reference_key').on(t.userId, t.environment, t.reference),
    // The list's indexes, each ending in its order (created_at, id): pages are index ranges and
    // exact totals index-only counts, per filter. The plain (owner, created_at, id) one, with the
    // searched and filtered columns, is written in SQL (migration 0043_list_search_covering_indexes).
    index('wallet_transactions_owner_type_status_created_idx').on(
      t.userId,
      t.environment,
      t.type,
      t.status,
      t.createdAt,
      t.id,
    ),
    index('wallet_transactions_owner_status_created_idx').on(t.userId, t.environment, t.status, t.createdAt, t.id),
    index('wallet_transactions_owner_amount_created_idx').on(t.userId, t.environment, t.amount, t.createdAt, t.id),
  ],
);

export const paymentMethodTypeEnum = pgEnum('payment_method_type', ['card', 'bank_account']);

/** A stored way to pay: a card as the provider's token (never its number or CVV), or a bank account. */
export const paymentMethods = pgTable(
  'payment_methods',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    type: paymentMethodTypeEnum('type').notNull(),
    provider: text('provider').notNull(),
    providerToken: text('provider_token'),
    brand: text('brand'),
    last4: text('last4'),
    expMonth: integer('exp_month'),
    expYear: integer('exp_year'),
    bankCode: text('bank_code'),
    bankName: text('bank_name'),
    accountNumber: text('account_number'),
    accountName: text('account_name'),
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: createdAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('payment_methods_owner_idx').on(t.userId, t.environment),
    /** Cooling-off: when a bank account was first saved as a payout destination. */
    index('payment_methods_bank_account_idx')
      .on(t.userId, t.environment, t.bankCode, t.accountNumber, t.createdAt)
      .where(sql`${t.type} = 'bank_account' and ${t.deletedAt} is null`),
    uniqueIndex('payment_methods_one_default')
      .on(t.userId, t.environment)
      .where(sql`${t.isDefault} and ${t.deletedAt} is null`),
  ],
);

export const depositStatusEnum = pgEnum('deposit_status', ['initiated', 'pending', 'completed', 'failed']);

/** A deposit into the wallet; credited exactly once, only when it completes. */
export const deposits = pgTable(
  'deposits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    reference: text('reference').notNull(),
    /** card | bank_transfer | ussd | payment_link | virtual_account */
    method: text('method').notNull(),
    paymentMethodId: uuid('payment_method_id').references(() => paymentMethods.id),
    amount: kobo('amount').notNull(),
    currency: text('currency').notNull().default('NGN'),
    status: depositStatusEnum('status').notNull().default('initiated'),
    provider: text('provider').notNull(),
    providerRef: text('provider_ref'),
    nextAction: jsonb('next_action'),
    accountNumber: text('account_number'),
    bankName: text('bank_name'),
    accountName: text('account_name'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    redirectUrl: text('redirect_url'),
    narration: text('narration'),
    meta: jsonb('meta'),
    customer: jsonb('customer'),
    failureReason: text('failure_reason'),
    /**
     * The wallet transaction the deposit opened, so its start (deposit-writes.ts) reaches it by id;
     * null for deposits opened before this column and for transfers into virtual accounts (never
     * started), which are found by their reference.
     */
    transactionId: uuid('transaction_id'),
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('deposits_owner_reference_key').on(t.userId, t.environment, t.reference),
    uniqueIndex('deposits_provider_ref_key').on(t.provider, t.providerRef),
  ],
);

export const payoutStatusEnum = pgEnum('payout_status', ['initiated', 'processing', 'completed', 'failed']);

/** A withdrawal to a bank account: held at request, captured on success, released on failure. */
export const payouts = pgTable(
  'payouts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    reference: text('reference').notNull(),
    amount: kobo('amount').notNull(),
    fee: kobo('fee').notNull(),
    bankCode: text('bank_code').notNull(),
    bankName: text('bank_name').notNull(),
    accountNumber: text('account_number').notNull(),
    accountName: text('account_name').notNull(),
    narration: text('narration'),
    status: payoutStatusEnum('status').notNull().default('initiated'),
    holdId: uuid('hold_id')
      .notNull()
      .references(() => ledgerHolds.id),
    provider: text('provider').notNull(),
    providerRef: text('provider_ref'),
    failureReason: text('failure_reason'),
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('payouts_owner_reference_key').on(t.userId, t.environment, t.reference),
    /** Cooling-off: when a destination was first paid, and what has gone to it since. */
    index('payouts_destination_idx').on(t.userId, t.environment, t.bankCode, t.accountNumber, t.createdAt),
  ],
);

/** A user's permanent virtual account: transfers into it are deposits. */
export const virtualAccounts = pgTable(
  'virtual_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    provider: text('provider').notNull(),
    providerRef: text('provider_ref').notNull(),
    accountNumber: text('account_number').notNull(),
    bankName: text('bank_name').notNull(),
    accountName: text('account_name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('virtual_accounts_owner_key').on(t.userId, t.environment),
    uniqueIndex('virtual_accounts_number_key').on(t.provider, t.accountNumber),
  ],
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
