import { createPrivateKey, randomUUID, sign as signEd25519 } from 'node:crypto';
import { Keypair, PublicKey } from '@solana/web3.js';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { solanaWallets } from '../../db/solana-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import type { Custody } from '../chain/custody.js';
import type { MasterKeyring } from '../chain/keyring.js';
import { sealedKeys } from '../chain/sealed-keys.js';

export type SolanaWalletRow = typeof solanaWallets.$inferSelect;
/** The wallet as the graph shows it: its address only, never its sealed key. */
export interface SolanaWalletAddress {
  address: string;
}

/** Wallet rows kept in memory at most (about 1 KB each). */
const MAX_KNOWN = 10_000;

/**
 * Solana's custody (chain/custody.ts): one custodial keypair per user and environment, created on first use. The secret key is only
 * ever in memory while signing; a ciphertext moved to another wallet or user, or altered, fails to
 * open (the AAD binds it).
 */
export class CustodialWallets implements Custody<SolanaWalletRow> {
  /** The sealing every family's keys share (chain/sealed-keys.ts), as family `solana`. */
  private readonly sealed;

  constructor(
    private readonly db: Database,
    keyrings: (environment: Environment) => MasterKeyring | undefined,
    /**
     * Told of each wallet this creates (production wallets start being watched for arrivals). An
     * object held as a property, not a closure, so a job's run binds it to the job's database
     * handle with the rest (db/database-binding.ts).
     */
    private readonly arrivals?: { walletCreated(wallet: SolanaWalletRow): Promise<void> },
  ) {
    this.sealed = sealedKeys('solana', keyrings);
  }

  /**
   * Wallet rows by owner: a wallet's id and address never change, and its sealed key changes only
   * by a re-wrap under a newer master key version, after which the old blob still opens for as
   * long as this process has the old version. So a row is served from here while its version is
   * configured, and read again once it is not (or after a re-wrap in this process).
   */
  private readonly known = new Map<string, SolanaWalletRow>();

  async walletOf(principal: Principal): Promise<SolanaWalletRow> {
    const cacheKey = `${principal.userId}:${principal.environment}`;
    const cached = this.known.get(cacheKey);
    if (cached && this.sealed.opens(cached.environment, cached.keyVersion)) return cached;
    const wallet = await this.loadOrCreate(principal);
    if (this.known.size >= MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
    this.known.set(cacheKey, wallet);
    return wallet;
  }

  private async loadOrCreate(principal: Principal): Promise<SolanaWalletRow> {
    const owner = and(eq(solanaWallets.userId, principal.userId), eq(solanaWallets.environment, principal.environment));
    const [existing] = await this.db.select().from(solanaWallets).where(owner);
    if (existing) return existing;
    this.sealed.keyringFor(principal.environment);
    const keypair = Keypair.generate();
    const id = randomUUID();
    const [created] = await this.db
      .insert(solanaWallets)
      .values({
        id,
        userId: principal.userId,
        environment: principal.environment,
        address: keypair.publicKey.toBase58(),
        ...this.sealed.seal({ id, userId: principal.userId, environment: principal.environment }, keypair.secretKey),
      })
      .onConflictDoNothing()
      .returning();
    keypair.secretKey.fill(0);
    if (created) {
      await this.arrivals?.walletCreated(created);
      return created;
    }
    // A concurrent first use won: that wallet is the user's.
    const [winner] = await this.db.select().from(solanaWallets).where(owner);
    return winner!;
  }

  /** An ed25519 signature by the wallet's key, which exists in memory only for this call. */
  async sign(wallet: SolanaWalletRow, message: Uint8Array): Promise<Uint8Array> {
    const secret = this.sealed.open(wallet);
    try {
      // The secret's public half must be the wallet's address. The seed is not derived again (a
      // curve multiplication per signature): GCM authenticates the 64 bytes the wallet was created
      // with, and a signature by another seed is refused by the chain anyway.
      if (!secret.subarray(32).equals(new PublicKey(wallet.address).toBuffer()))
        throw new DomainError('INTERNAL_SERVER_ERROR', 'A custodial key does not match its address.');
      // Imported as a JWK (the seed and the public key): node parses PKCS#8 DER about ten times slower.
      const privateKey = createPrivateKey({
        key: {
          kty: 'OKP',
          crv: 'Ed25519',
          d: secret.subarray(0, 32).toString('base64url'),
          x: secret.subarray(32).toString('base64url'),
        },
        format: 'jwk',
      });
      return new Uint8Array(signEd25519(null, message, privateKey));
    } finally {
      secret.fill(0);
    }
  }

  /**
   * Re-wraps every data key of an environment with its current master key version: run after
   * adding a new version, before removing the old one. A wallet whose key does not open (a version
   * missing from the keyring) is left as it is and listed, so the operator can add that version
   * back before dropping anything.
   */
  async rewrapDataKeys(environment: Environment): Promise<{ rewrapped: number; failed: string[] }> {
    this.sealed.keyringFor(environment);
    this.known.clear();
    return this.sealed.rewrapTable(this.db, 'solana_wallets', environment);
  }
}
