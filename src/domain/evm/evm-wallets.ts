import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { type Hex, toHex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import type { Database } from '../../db/client.js';
import { evmWallets } from '../../db/evm-wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { Custody } from '../chain/custody.js';
import type { MasterKeyring } from '../chain/keyring.js';
import { sealedKeys } from '../chain/sealed-keys.js';
import { DomainError } from '../errors.js';
import { evmAddresses } from './evm-keys.js';

export type EvmWalletRow = typeof evmWallets.$inferSelect;

/** The family name EVM rows carry (custody, chain_sends, the asset ledger). */
export const EVM = 'evm';

/** Wallet rows kept in memory at most. */
const MAX_KNOWN = 10_000;

/**
 * EVM custody (chain/custody.ts): one secp256k1 key per user and environment, created on first use,
 * sealed as every family's keys are (chain/sealed-keys.ts, family `evm`). The key is in memory only
 * while it signs.
 */
export class EvmWallets implements Custody<EvmWalletRow> {
  private readonly sealed;
  /** Rows by owner: id and address never change; a row is served while its key version opens here. */
  private readonly known = new Map<string, EvmWalletRow>();
  /** Public keys by lower-case address, learnt while signing (see publicKeyOf). */
  private readonly publicKeys = new Map<string, Uint8Array>();

  constructor(
    private readonly db: Database,
    keyrings: (environment: Environment) => MasterKeyring | undefined,
  ) {
    this.sealed = sealedKeys(EVM, keyrings);
  }

  async walletOf(principal: Principal): Promise<EvmWalletRow> {
    const cacheKey = `${principal.userId}:${principal.environment}`;
    const cached = this.known.get(cacheKey);
    if (cached && this.sealed.opens(cached.environment, cached.keyVersion)) return cached;
    const wallet = await this.loadOrCreate(principal);
    if (this.known.size >= MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
    this.known.set(cacheKey, wallet);
    return wallet;
  }

  /** The owner of a custodial address in an environment (arrivals are told to them). */
  async ownersOf(environment: Environment, addresses: string[]): Promise<Map<string, string>> {
    if (addresses.length === 0) return new Map();
    const rows = await this.db
      .select({ userId: evmWallets.userId, address: evmWallets.address })
      .from(evmWallets)
      .where(eq(evmWallets.environment, environment));
    const wanted = new Set(addresses.map((a) => a.toLowerCase()));
    return new Map(rows.filter((r) => wanted.has(r.address.toLowerCase())).map((r) => [r.address, r.userId]));
  }

  private async loadOrCreate(principal: Principal): Promise<EvmWalletRow> {
    const owner = and(eq(evmWallets.userId, principal.userId), eq(evmWallets.environment, principal.environment));
    const [existing] = await this.db.select().from(evmWallets).where(owner);
    if (existing) return existing;
    this.sealed.keyringFor(principal.environment);
    const { address, secret } = evmAddresses.generate();
    const id = randomUUID();
    try {
      const [created] = await this.db
        .insert(evmWallets)
        .values({
          id,
          userId: principal.userId,
          environment: principal.environment,
          address,
          ...this.sealed.seal({ id, userId: principal.userId, environment: principal.environment }, secret),
        })
        .onConflictDoNothing()
        .returning();
      if (created) return created;
    } finally {
      secret.fill(0);
    }
    // A concurrent first use won: that wallet is the user's.
    const [winner] = await this.db.select().from(evmWallets).where(owner);
    return winner!;
  }

  /**
   * Signs a 32-byte digest (the family hashes what it signs: evm-signing.ts) with the wallet's key:
   * 65 bytes, r ‖ s ‖ recovery id. The key is checked against the wallet's address first, so a
   * sealed key that opens but is not this wallet's never signs for it.
   */
  async sign(wallet: EvmWalletRow, digest: Uint8Array): Promise<Uint8Array> {
    if (digest.length !== 32) throw new Error('An EVM custody signs a 32-byte digest.');
    const secret = this.sealed.open(wallet);
    try {
      const privateKey: Hex = toHex(secret);
      const account = privateKeyToAccount(privateKey);
      if (account.address !== wallet.address)
        throw new DomainError('INTERNAL_SERVER_ERROR', 'A custodial key does not match its address.');
      this.rememberPublicKey(account.address, account.publicKey);
      const signature = await sign({ hash: toHex(digest), privateKey });
      const bytes = new Uint8Array(65);
      bytes.set(Buffer.from(signature.r.slice(2).padStart(64, '0'), 'hex'), 0);
      bytes.set(Buffer.from(signature.s.slice(2).padStart(64, '0'), 'hex'), 32);
      bytes[64] = signature.yParity ?? 0;
      return bytes;
    } finally {
      secret.fill(0);
    }
  }

  /**
   * The uncompressed public key (64 bytes, no prefix) of an address this process signed for, so a
   * chain that can skip recovering the sender of a transaction we signed does (sandbox-chain.ts).
   */
  publicKeyOf(address: string): Uint8Array | undefined {
    return this.publicKeys.get(address.toLowerCase());
  }

  private rememberPublicKey(address: string, publicKey: Hex): void {
    const key = address.toLowerCase();
    if (this.publicKeys.has(key)) return;
    if (this.publicKeys.size >= MAX_KNOWN) this.publicKeys.delete(this.publicKeys.keys().next().value!);
    // viem's form is 0x04 ‖ x ‖ y; ethereumjs keeps x ‖ y.
    this.publicKeys.set(key, Buffer.from(publicKey.slice(4), 'hex'));
  }

  /** Re-wraps every data key of an environment with its current master key version (see keyring.ts). */
  async rewrapDataKeys(environment: Environment): Promise<{ rewrapped: number; failed: string[] }> {
    this.sealed.keyringFor(environment);
    this.known.clear();
    return this.sealed.rewrapTable(this.db, 'evm_wallets', environment);
  }
}
