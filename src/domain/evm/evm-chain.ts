import type { ChainAdapter } from '../chain/chain-adapter.js';
import type { EvmNetwork } from './networks.js';

/**
 * What the EVM family asks of one network, sandbox or JSON-RPC alike. Addresses are 0x-prefixed
 * checksummed or lower-case hex; amounts are wei or token base units; transactions travel as the
 * signed EIP-1559 (type 2) bytes `eth_sendRawTransaction` takes.
 *
 * `ChainAdapter.sendRaw` throws TransactionRejected for a transaction that can never be included as
 * it is (bad nonce, fee below base fee, insufficient native for gas × fee cap + value); a
 * transaction that is included and reverts is a receipt with `status: 'reverted'` (its nonce is
 * used and its fee spent). `txState` reads a reverted receipt as `failed`.
 */
export interface EvmChain extends ChainAdapter {
  readonly network: EvmNetwork;
  readonly chainId: number;
  /**
   * `ChainAdapter.sendRaw`, told the sender's public key (64 bytes, x ‖ y) when the caller signed
   * the transaction itself: the sandbox's chain then skips recovering it (about 4 ms of pure-JS
   * curve arithmetic a send); a JSON-RPC chain ignores it.
   */
  sendRaw(wire: Uint8Array, signer?: { publicKey: Uint8Array }): Promise<string>;
  /** The next nonce the chain will accept from `address` (its mined transaction count). */
  transactionCount(address: string): Promise<bigint>;
  /** What a type-2 transaction should offer now; `maxFeePerGas` leaves room for the base fee to rise. */
  feeTerms(): Promise<EvmFeeTerms>;
  /** Gas a call would use; throws TransactionRejected naming the revert when it would revert. */
  estimateGas(call: EvmCall & { from: string }): Promise<bigint>;
  /** A read-only call's return data; never changes state. */
  call(call: EvmCall & { from?: string }): Promise<Uint8Array>;
  /** The L1 data fee a signed transaction pays on networks that charge one (0n elsewhere). */
  dataFee(signed: Uint8Array): Promise<bigint>;
  receipt(hash: string): Promise<EvmReceipt | undefined>;
  /** Logs in blocks `fromBlock`..`toBlock` (inclusive), optionally of one contract and first topics. */
  logs(filter: EvmLogFilter): Promise<EvmLog[]>;
  /**
   * The native coin moved by successful transactions in blocks `fromBlock`..`toBlock` (inclusive):
   * each transaction with a value above 0, top-level only (a JSON-RPC chain reads it from its blocks'
   * transactions; value moved by contracts internally is not included).
   */
  nativeTransfers(range: { fromBlock: bigint; toBlock: bigint }): Promise<EvmNativeTransfer[]>;
}

export interface EvmNativeTransfer {
  hash: string;
  from: string;
  to: string;
  value: bigint;
  blockNumber: bigint;
}

export interface EvmCall {
  to: string;
  data?: Uint8Array;
  value?: bigint;
}

export interface EvmFeeTerms {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
}

export interface EvmReceipt {
  hash: string;
  status: 'success' | 'reverted';
  blockNumber: bigint;
  blockHash: string;
  from: string;
  to: string | null;
  nonce: bigint;
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  /** The data fee charged on top of gas on networks that charge one. */
  dataFee: bigint;
  logs: EvmLog[];
}

export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: bigint;
  transactionHash: string;
  logIndex: number;
}

export interface EvmLogFilter {
  fromBlock: bigint;
  toBlock: bigint;
  address?: string;
  topics?: (string | null)[];
}

/**
 * The sandbox's extra powers over its chains, used by the faucet, the tests and the exchange: the
 * deployed contracts, minting, and a mempool that does as it is told.
 */
export interface EvmSandboxChain extends EvmChain {
  /** The address of a supported token's contract on this chain (deployed when the chain was created). */
  tokenAddress(symbol: string): string;
  /** Credits `to` with native coin or mints a token, in its own block; answers the transaction hash. */
  faucet(to: string, asset: { native: true } | { token: string }, amount: bigint): Promise<string>;
  readonly mempool: EvmSandboxMempool;
  /** Deploys the sandbox exchange (Uniswap V2, seeded pools) on this network unless it is there. */
  ensureExchange(): Promise<void>;
}

/** What tests and later issues tell the sandbox mempool; by default it includes every transaction at once. */
export interface EvmSandboxMempool {
  /** Holds transactions in the mempool (not yet mined) until `release` or `drop`. */
  pause(): Promise<void>;
  /** Mines what is held, in the order given by hashes first (the rest after, as they arrived). */
  release(order?: string[]): Promise<void>;
  /** Forgets held transactions (they never land; their nonces stay free). */
  drop(hashes: string[]): Promise<void>;
  /** Hashes held now, in arrival order. */
  pending(): Promise<string[]>;
}
