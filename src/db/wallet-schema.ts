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
import { ownerColumns } from './schema.js';
import { ledgerHolds } from './ledger-schema.js';

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
