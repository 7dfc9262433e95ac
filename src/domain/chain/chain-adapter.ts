/**
 * What the chain-neutral core asks of one network of a family: balances, a raw send and the
 * chain's word on it. Amounts are raw units of the chain (lamports, wei, token base units);
 * transactions travel as the bytes the chain accepts, never as a family library's classes.
 */

/** The chain's word on a sent transaction: landed (ok or failed on-chain), or not known (yet). */
export type TxState = { state: 'confirmed' } | { state: 'failed'; error: string } | { state: 'unknown' };

/** A refusal before the transaction was accepted (preflight): it will not land as it is. */
export class TransactionRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TransactionRejected';
  }
}

export interface ChainAdapter {
  readonly network: string;
  /** What `address` holds of the chain's native asset (SOL, ETH), in raw units. */
  nativeBalance(address: string): Promise<bigint>;
  /** What `owner` holds of a token (a Solana mint, an ERC-20 contract), in raw units: 0 without any. */
  tokenBalance(owner: string, token: string): Promise<bigint>;
  /** Sends a signed transaction; answers its hash (a Solana signature). Throws TransactionRejected on preflight. */
  sendRaw(wire: Uint8Array): Promise<string>;
  txState(hash: string): Promise<TxState>;
  /** The chain's height (Solana's block height, an EVM block number), which expiry is judged by. */
  height(): Promise<bigint>;
}
