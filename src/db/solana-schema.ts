import { integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
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
  (t) => [uniqueIndex('solana_wallets_owner_key').on(t.userId, t.environment), uniqueIndex('solana_wallets_address_env_key').on(t.environment, t.address)],
);
