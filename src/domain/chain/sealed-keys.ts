import { sql } from 'drizzle-orm';
import { type Database, queryRows } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import { DomainError } from '../errors.js';
import { type MasterKeyring, open, seal } from './keyring.js';

/** A custodial key as it is stored: its secret under a data key, the data key wrapped by a master key version. */
export interface SealedKey {
  id: string;
  userId: string;
  environment: Environment;
  encryptedSecret: string;
  wrappedDataKey: string;
  keyVersion: number;
}

/** The tables custodial keys are stored in, one per family, with the same sealed columns. */
export type SealedKeyTable = 'solana_wallets' | 'evm_wallets';

/**
 * The sealing rules of a family's custodial keys: AES-256-GCM twice, the secret under a random data
 * key and the data key under the environment's master key, each bound (AAD) to the family, the
 * wallet and its user, and the data key also to its master key version, so a ciphertext moved to
 * another wallet, user or family, or altered, fails to open.
 */
export function sealedKeys(family: string, keyrings: (environment: Environment) => MasterKeyring | undefined) {
  const secretAad = (wallet: { id: string; userId: string }) => `${family}-secret:${wallet.id}:${wallet.userId}`;
  const dataKeyAad = (wallet: { id: string; userId: string }, version: number) =>
    `${family}-data-key:${wallet.id}:${wallet.userId}:v${version}`;

  const keyringFor = (environment: Environment): MasterKeyring => {
    const keyring = keyrings(environment);
    if (!keyring)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `Custodial wallets are not configured for ${environment} (SOLANA_MASTER_KEYS_${environment.toUpperCase()} is unset).`,
      );
    return keyring;
  };

  return {
    keyringFor,
    /** Whether this process can open a key of that version now (a cached row is good while it can). */
    opens: (environment: Environment, version: number) => keyrings(environment)?.has(version) ?? false,

    /** The sealed columns of a new wallet's secret, under the current master key version. */
    seal(wallet: { id: string; userId: string; environment: Environment }, secret: Uint8Array) {
      const keyring = keyringFor(wallet.environment);
      const version = keyring.currentVersion;
      const dataKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
      try {
        return {
          encryptedSecret: seal(dataKey, Buffer.from(secret), secretAad(wallet)),
          wrappedDataKey: seal(keyring.key(version), dataKey, dataKeyAad(wallet, version)),
          keyVersion: version,
        };
      } finally {
        dataKey.fill(0);
      }
    },

    /** The wallet's secret, opened for one use; the caller zeroes it. */
    open(wallet: SealedKey): Buffer {
      const keyring = keyringFor(wallet.environment);
      try {
        const dataKey = open(
          keyring.key(wallet.keyVersion),
          wallet.wrappedDataKey,
          dataKeyAad(wallet, wallet.keyVersion),
        );
        const secret = open(dataKey, wallet.encryptedSecret, secretAad(wallet));
        dataKey.fill(0);
        return secret;
      } catch (cause) {
        if (cause instanceof DomainError) throw cause;
        throw new DomainError('INTERNAL_SERVER_ERROR', 'A custodial key failed to decrypt.', { cause });
      }
    },

    /**
     * Re-wraps the data keys of a family's wallets `table` in one environment with its current
     * master key version: run after adding a new version, before removing the old one. A wallet
     * whose key does not open (a version missing from the keyring) is left as it is and listed, so
     * the operator can add that version back before dropping anything.
     */
    async rewrapTable(
      db: Database,
      table: SealedKeyTable,
      environment: Environment,
    ): Promise<{ rewrapped: number; failed: string[] }> {
      const wallets = await queryRows<SealedKey>(
        db,
        sql`select id, user_id as "userId", environment, encrypted_secret as "encryptedSecret",
              wrapped_data_key as "wrappedDataKey", key_version as "keyVersion"
            from ${sql.identifier(table)} where environment = ${environment}::environment`,
      );
      // Only if no other re-wrap moved it meanwhile.
      const store = (wallet: SealedKey, wrapped: { wrappedDataKey: string; keyVersion: number }) =>
        db.execute(
          sql`update ${sql.identifier(table)} set wrapped_data_key = ${wrapped.wrappedDataKey}, key_version = ${wrapped.keyVersion}
              where id = ${wallet.id}::uuid and key_version = ${wallet.keyVersion}`,
        );
      const keyring = keyringFor(environment);
      const target = keyring.currentVersion;
      let rewrapped = 0;
      const failed: string[] = [];
      for (const wallet of wallets) {
        if (wallet.keyVersion === target) continue;
        let dataKey: Buffer;
        try {
          dataKey = open(keyring.key(wallet.keyVersion), wallet.wrappedDataKey, dataKeyAad(wallet, wallet.keyVersion));
        } catch {
          failed.push(wallet.id);
          continue;
        }
        const wrappedDataKey = seal(keyring.key(target), dataKey, dataKeyAad(wallet, target));
        dataKey.fill(0);
        await store(wallet, { wrappedDataKey, keyVersion: target });
        rewrapped++;
      }
      return { rewrapped, failed };
    },
  };
}
