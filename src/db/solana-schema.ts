import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { bytes, createdAt, tokenUnits, updatedAt } from './columns.js';
import { ownerColumns } from './schema.js';

/**
 * A user's custodial Solana keypair in one environment. The secret key is encrypted with a random
 * data key (AES-256-GCM, random IV, bound to this wallet and user); the data key is wrapped by the
 * environment's master key of `keyVersion`, which lives in configuration, never here.
 */
export const solanaWallets = pgTable(
  'solana_wallets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    address: text('address').notNull(),
    /** base64 of IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
    encryptedSecret: text('encrypted_secret').notNull(),
    /** The data key, wrapped the same way by the master key. */
    wrappedDataKey: text('wrapped_data_key').notNull(),
    keyVersion: integer('key_version').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('solana_wallets_owner_key').on(t.userId, t.environment),
    uniqueIndex('solana_wallets_address_env_key').on(t.environment, t.address),
  ],
);

/**
 * A sandbox chain (one per network name): its version, moved by one on every committed change
 * (the optimistic check every instance's write makes). Its state is the genesis world (built in
 * code, the same everywhere) with the account rows below laid over it. `snapshot` is the whole
 * litesvm state as chains were once stored: when present it is the base instead of genesis, so a
 * chain from then keeps its balances; nothing writes it any more.
 */
export const solanaSandboxChains = pgTable('solana_sandbox_chains', {
  network: text('network').primaryKey(),
  version: bigint('version', { mode: 'number' }).notNull(),
  snapshot: bytes('snapshot'),
  updatedAt: updatedAt(),
});

/**
 * The latest state of every account a sandbox transaction changed, written in the commit that
 * moves the chain to `version`: another instance catches up by reading the rows newer than the
 * version it holds.
 */
export const solanaSandboxAccounts = pgTable(
  'solana_sandbox_accounts',
  {
    network: text('network').notNull(),
    address: text('address').notNull(),
    lamports: tokenUnits('lamports').notNull(),
    /** The owning program. */
    owner: text('owner').notNull(),
    data: bytes('data').notNull(),
    executable: boolean('executable').notNull(),
    version: bigint('version', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.address] }),
    index('solana_sandbox_accounts_version_idx').on(t.network, t.version),
  ],
);

/** Signatures a sandbox chain executed: a transaction runs once, and its signature is confirmed from here. */
export const solanaSandboxSignatures = pgTable(
  'solana_sandbox_signatures',
  {
    network: text('network').notNull(),
    signature: text('signature').notNull(),
    version: bigint('version', { mode: 'number' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.signature] }),
    index('solana_sandbox_signatures_version_idx').on(t.network, t.version),
  ],
);

/** A swap quote as the caller saw it, kept for its short life so a swap can name it by id. */
export const solanaQuotes = pgTable(
  'solana_quotes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    network: text('network').notNull(),
    quote: jsonb('quote').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** When a swap took this quote: set once, by a conditional update, so a quote executes at most once. */
    executedAt: timestamp('executed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [index('solana_quotes_owner_idx').on(t.userId, t.environment, t.createdAt)],
);

/**
 * Production incoming-transfer watch: for each watched address (a custodial wallet or one of its
 * token accounts) on a network, the newest signature already looked at. Claimed with a lease, so
 * any number of instances share the polling and no address is read twice at once.
 */
export const solanaWatchCursors = pgTable(
  'solana_watch_cursors',
  {
    address: text('address').notNull(),
    network: text('network').notNull(),
    walletAddress: text('wallet_address').notNull(),
    lastSignature: text('last_signature'),
    checkedAt: timestamp('checked_at', { withTimezone: true, mode: 'date' }),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
  },
  (t) => [primaryKey({ columns: [t.address, t.network] })],
);
