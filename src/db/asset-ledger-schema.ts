import { sql } from 'drizzle-orm';
import { boolean, index, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tokenUnits } from './columns.js';
import { environmentEnum, users } from './schema.js';

/**
 * The asset ledger: the NGN ledger's rules (double entry, append-only entries, guarded balances,
 * holds settled once) in the base units of any chain asset. An account is one owner's (or the
 * system's) balance of one asset on one network of one family; a posting's entries sum to zero
 * per asset, since every line of a posting is of accounts of the asset its reference moved.
 */
export const assetAccounts = pgTable(
  'asset_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    /** Null for system accounts (`external`, `fees`). */
    userId: uuid('user_id').references(() => users.id),
    /** wallet | holds | external | fees */
    code: text('code').notNull(),
    family: text('family').notNull(),
    network: text('network').notNull(),
    /** The family's name for the asset: a mint, a contract, or its native coin's key. */
    asset: text('asset').notNull(),
    /** The custodial wallet's address (user accounts), for reconciliation against the chain. */
    address: text('address'),
    /** environment:owner:code:family:network:asset[#shard], one account each. */
    key: text('key').notNull(),
    balance: tokenUnits('balance').notNull().default(sql`0`),
    allowNegative: boolean('allow_negative').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('asset_accounts_key').on(t.key),
    index('asset_accounts_wallet_idx').on(t.environment, t.family, t.network, t.address),
  ],
);

/** One movement of one asset: entries that sum to zero. `reference` is unique per kind, so it happens once. */
export const assetPostings = pgTable(
  'asset_postings',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    kind: text('kind').notNull(),
    reference: text('reference').notNull(),
    asset: text('asset').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('asset_postings_kind_reference').on(t.kind, t.reference)],
);

export const assetEntries = pgTable(
  'asset_entries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    postingId: uuid('posting_id')
      .notNull()
      .references(() => assetPostings.id),
    accountId: uuid('account_id')
      .notNull()
      .references(() => assetAccounts.id),
    amount: tokenUnits('amount').notNull(),
    balanceAfter: tokenUnits('balance_after').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('asset_entries_account_idx').on(t.accountId, t.createdAt),
    index('asset_entries_posting_idx').on(t.postingId),
  ],
);

export const assetHoldStatusEnum = pgEnum('asset_hold_status', ['held', 'captured', 'released']);

/**
 * What a chain send holds of one asset, from its record until it is captured (it landed) or
 * released (it can never land). No expiry: a send that may have been broadcast can still land, so
 * only the send's own end settles its holds.
 */
export const assetHolds = pgTable(
  'asset_holds',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    environment: environmentEnum('environment').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    /** The chain send (chain_sends.id) it pays for, and that send's hash. */
    sendId: uuid('send_id').notNull(),
    txHash: text('tx_hash').notNull(),
    asset: text('asset').notNull(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => assetAccounts.id),
    holdsAccountId: uuid('holds_account_id')
      .notNull()
      .references(() => assetAccounts.id),
    amount: tokenUnits('amount').notNull(),
    /** Of the amount, what the send moves to its recipient (the rest is fees, rent, gas at their cap). */
    principal: tokenUnits('principal').notNull(),
    status: assetHoldStatusEnum('status').notNull().default('held'),
    createdAt: createdAt(),
    settledAt: timestamp('settled_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('asset_holds_send_asset').on(t.sendId, t.asset), index('asset_holds_tx_hash_idx').on(t.txHash)],
);
