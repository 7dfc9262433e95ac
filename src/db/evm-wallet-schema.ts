import { bigint, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { environmentEnum, ownerColumns } from './schema.js';

/**
 * A user's custodial EVM key in one environment: one secp256k1 key, so one address on every EVM
 * network. Sealed as the Solana keys are (chain/keyring.ts): the 32-byte private key under a random
 * data key bound to this wallet and user, the data key wrapped by the environment's master key of
 * `keyVersion`, which lives in configuration, never here.
 */
export const evmWallets = pgTable(
  'evm_wallets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    /** Checksummed (EIP-55). */
    address: text('address').notNull(),
    /** base64 of IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
    encryptedSecret: text('encrypted_secret').notNull(),
    wrappedDataKey: text('wrapped_data_key').notNull(),
    keyVersion: integer('key_version').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('evm_wallets_owner_key').on(t.userId, t.environment),
    uniqueIndex('evm_wallets_address_env_key').on(t.environment, t.address),
  ],
);

/**
 * The next nonce of a custodial address on one network: moved forward by one in the commit that
 * stores a signed transaction with the nonce it had, under the wallet's row lock, and never moved
 * back. A nonce once stored with a signed transaction belongs to that send (or its replacement).
 */
export const evmNonces = pgTable(
  'evm_nonces',
  {
    environment: environmentEnum('environment').notNull(),
    network: text('network').notNull(),
    address: text('address').notNull(),
    next: bigint('next', { mode: 'bigint' }).notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.environment, t.network, t.address] })],
);

/**
 * How far the watch for arrivals has read a sandbox network's blocks: the last block whose
 * transfers to custodial addresses were told.
 */
export const evmIncomingCursors = pgTable(
  'evm_incoming_cursors',
  {
    environment: environmentEnum('environment').notNull(),
    network: text('network').notNull(),
    block: bigint('block', { mode: 'bigint' }).notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.environment, t.network] })],
);
