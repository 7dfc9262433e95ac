import { createPrivateKey, randomUUID, sign as signEd25519 } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { solanaWallets } from '../../db/solana-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import { type MasterKeyring, open, seal } from './keyring.js';

export type SolanaWalletRow = typeof solanaWallets.$inferSelect;
/** The wallet as the graph shows it: its address only, never its sealed key. */
export interface SolanaWalletAddress {
  address: string;
}

/** Signs for a custodial wallet. AES-GCM with configured master keys today; a KMS can replace it. */
export interface Signer {
  sign(wallet: SolanaWalletRow, message: Uint8Array): Promise<Uint8Array>;
}

const secretAad = (wallet: { id: string; userId: string }) => `solana-secret:${wallet.id}:${wallet.userId}`;
const dataKeyAad = (wallet: { id: string; userId: string }, version: number) =>
  `solana-data-key:${wallet.id}:${wallet.userId}:v${version}`;

/**
 * One custodial keypair per user and environment, created on first use. The secret key is only
 * ever in memory while signing; a ciphertext moved to another wallet or user, or altered, fails to
 * open (the AAD binds it).
 */
export class CustodialWallets implements Signer {
  constructor(
    private readonly db: Database,
    private readonly keyrings: (environment: Environment) => MasterKeyring | undefined,
    /** Told of each wallet this creates (production wallets start being watched for arrivals). */
    private readonly onCreated: (wallet: SolanaWalletRow) => Promise<void> = async () => undefined,
  ) {}

  async walletOf(principal: Principal): Promise<SolanaWalletRow> {
    const owner = and(eq(solanaWallets.userId, principal.userId), eq(solanaWallets.environment, principal.environment));
    const [existing] = await this.db.select().from(solanaWallets).where(owner);
    if (existing) return existing;
    const keyring = this.keyringFor(principal.environment);
    const keypair = Keypair.generate();
    const id = randomUUID();
    const version = keyring.currentVersion;
    const dataKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
    const wallet = { id, userId: principal.userId };
    const [created] = await this.db
      .insert(solanaWallets)
      .values({
        id,
        userId: principal.userId,
        environment: principal.environment,
        address: keypair.publicKey.toBase58(),
        encryptedSecret: seal(dataKey, Buffer.from(keypair.secretKey), secretAad(wallet)),
        wrappedDataKey: seal(keyring.key(version), dataKey, dataKeyAad(wallet, version)),
        keyVersion: version,
      })
      .onConflictDoNothing()
      .returning();
    dataKey.fill(0);
    keypair.secretKey.fill(0);
    if (created) {
      await this.onCreated(created);
      return created;
    }
    // A concurrent first use won: that wallet is the user's.
    const [winner] = await this.db.select().from(solanaWallets).where(owner);
    return winner!;
  }

  /** An ed25519 signature by the wallet's key, which exists in memory only for this call. */
  async sign(wallet: SolanaWalletRow, message: Uint8Array): Promise<Uint8Array> {
    const keypair = this.keypairOf(wallet);
    // PKCS#8 for an ed25519 seed: a fixed 16-byte prefix, then the 32-byte seed.
    const der = Buffer.concat([
      Buffer.from('302e020100300506032b657004220420', 'hex'),
      Buffer.from(keypair.secretKey.subarray(0, 32)),
    ]);
    try {
      return new Uint8Array(signEd25519(null, message, createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })));
    } finally {
      der.fill(0);
      keypair.secretKey.fill(0);
    }
  }

  /**
   * Re-wraps every data key of an environment with its current master key version: run after
   * adding a new version, before removing the old one. A wallet whose key does not open (a version
   * missing from the keyring) is left as it is and listed, so the operator can add that version
   * back before dropping anything.
   */
  async rewrapDataKeys(environment: Environment): Promise<{ rewrapped: number; failed: string[] }> {
    const keyring = this.keyringFor(environment);
    const target = keyring.currentVersion;
    const wallets = await this.db.select().from(solanaWallets).where(eq(solanaWallets.environment, environment));
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
      const sealed = seal(keyring.key(target), dataKey, dataKeyAad(wallet, target));
      dataKey.fill(0);
      await this.db
        .update(solanaWallets)
        .set({ wrappedDataKey: sealed, keyVersion: target })
        .where(and(eq(solanaWallets.id, wallet.id), eq(solanaWallets.keyVersion, wallet.keyVersion)));
      rewrapped++;
    }
    return { rewrapped, failed };
  }

  private keypairOf(wallet: SolanaWalletRow): Keypair {
    const keyring = this.keyringFor(wallet.environment);
    let secret: Buffer;
    try {
      const dataKey = open(
        keyring.key(wallet.keyVersion),
        wallet.wrappedDataKey,
        dataKeyAad(wallet, wallet.keyVersion),
      );
      secret = open(dataKey, wallet.encryptedSecret, secretAad(wallet));
      dataKey.fill(0);
    } catch (cause) {
      if (cause instanceof DomainError) throw cause;
      throw new DomainError('INTERNAL_SERVER_ERROR', 'A custodial key failed to decrypt.', { cause });
    }
    const keypair = Keypair.fromSecretKey(new Uint8Array(secret));
    secret.fill(0);
    if (keypair.publicKey.toBase58() !== wallet.address)
      throw new DomainError('INTERNAL_SERVER_ERROR', 'A custodial key does not match its address.');
    return keypair;
  }

  private keyringFor(environment: Environment): MasterKeyring {
    const keyring = this.keyrings(environment);
    if (!keyring)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `Custodial wallets are not configured for ${environment} (SOLANA_MASTER_KEYS_${environment.toUpperCase()} is unset).`,
      );
    return keyring;
  }
}
