import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import type { SolanaNetwork } from './networks.js';

export interface TokenHolding {
  mint: string;
  /** The token account's address. */
  account: string;
  amountRaw: bigint;
  decimals: number;
}

/** The chain's word on a signature: landed (ok or failed on-chain), or not known (yet). */
export type SignatureState = { state: 'confirmed' } | { state: 'failed'; error: string } | { state: 'unknown' };

/** A refusal before the transaction was accepted (preflight): it will not land as it is. */
export class TransactionRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TransactionRejected';
  }
}

/**
 * What the Solana services need from a chain: the sandbox's litesvm chain and production RPC
 * implement it alike, and so can tests' fakes. Amounts are raw units (lamports, base units).
 */
export interface SolanaChain {
  readonly network: SolanaNetwork;
  latestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint }>;
  blockHeight(): Promise<bigint>;
  lamports(address: string): Promise<bigint>;
  tokenHoldings(owner: string): Promise<TokenHolding[]>;
  /** What the owner's associated token account of a mint holds (0 without one): one lookup, not a scan. */
  associatedTokenAmount(owner: string, mint: string): Promise<bigint>;
  /** A mint's decimals, or undefined when the address is not a mint. */
  mintDecimals(mint: string): Promise<number | undefined>;
  accountExists(address: string): Promise<boolean>;
  /** Sends a signed transaction; returns its signature. Throws TransactionRejected when preflight refuses it. */
  sendTransaction(wire: Uint8Array): Promise<string>;
  signatureState(signature: string): Promise<SignatureState>;
  /** Lamports that keep an account of this size alive. */
  rentExempt(size: number): Promise<bigint>;
  /**
   * Reconciliation: transactions `address` signed in the window, by signature (amount null: the
   * list does not say). Absent where the chain keeps no history to list (the sandbox's litesvm).
   */
  signedBy?(address: string, window: ListWindow): Promise<ProviderRecord[]>;
}
