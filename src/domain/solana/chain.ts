import type { ChainAdapter, TxState } from '../chain/chain-adapter.js';
import type { Tx } from '../../db/client.js';
import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import type { SolanaNetwork } from './networks.js';

export interface TokenHolding {
  mint: string;
  /** The token account's address. */
  account: string;
  amountRaw: bigint;
  decimals: number;
}

/** What a transaction brought an address that did not sign it: SOL or a token. */
export interface Arrival {
  owner: string;
  /** SOL_MINT for lamports. */
  mint: string;
  amountRaw: bigint;
  decimals: number;
  signature: string;
  from: string;
}

/**
 * Told, in the transaction that stores the chain's new state, what a transaction did: so the
 * records that depend on it (the sender's transfer, the receivers' events) change in the same
 * commit as the chain, and are never half a step behind it.
 */
export type ExecutionListener = (
  tx: Tx,
  network: SolanaNetwork,
  executed: { signature: string; arrivals: Arrival[] },
) => Promise<void>;

/** The chain's word on a signature: the core's TxState (chain/chain-adapter.ts). */
export type SignatureState = TxState;
/** Solana's preflight refusal is the core's (chain/chain-adapter.ts); test fakes throw it by this name. */
export { TransactionRejected } from '../chain/chain-adapter.js';

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
  /**
   * True where every movement of a custodial wallet is posted to the asset ledger in the commit that
   * records the chain's new state (the sandbox's chains): the ledger alone says what is spendable.
   * Elsewhere the ledger learns arrivals by observing the chain when a send is recorded.
   */
  readonly postsEveryMovement?: boolean;
}

/**
 * A Solana chain in the core's terms (chain/chain-adapter.ts): native balance in lamports, token
 * balance of the owner's associated token account, signatures as transaction hashes.
 */
export function solanaChainAdapter(chain: SolanaChain): ChainAdapter {
  return {
    network: chain.network,
    nativeBalance: (address) => chain.lamports(address),
    tokenBalance: (owner, mint) => chain.associatedTokenAmount(owner, mint),
    sendRaw: (wire) => chain.sendTransaction(wire),
    txState: (signature) => chain.signatureState(signature),
    height: () => chain.blockHeight(),
  };
}
