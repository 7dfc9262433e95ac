import type { Environment } from '../auth/permissions.js';
import type { ChainAdapter } from './chain-adapter.js';
import type { ExchangeProvider } from './exchange.js';

/** A family's addresses: fresh keys for custody, and whether a string is an address of the family. */
export interface FamilyAddresses {
  /** A new keypair: its address and its secret, which the caller seals and then zeroes. */
  generate(): { address: string; secret: Uint8Array };
  isValid(address: string): boolean;
}

/** A transfer the family prepared for a custodial key: its unsigned transaction in the chain's wire format. */
export interface PreparedTransfer {
  unsigned: Uint8Array;
  /** The custodial address that signs it (and pays its fee). */
  signer: string;
}

/** A signed transaction as it is stored before it is sent: its bytes and its hash (a Solana signature). */
export interface SignedTransfer {
  wire: Uint8Array;
  hash: string;
}

export interface FamilySigning {
  /**
   * Signs a prepared transfer with `sign` (the custody's signature of a message by the signer's
   * key), keeping signatures others already made.
   */
  sign(prepared: PreparedTransfer, sign: (message: Uint8Array) => Promise<Uint8Array>): Promise<SignedTransfer>;
}

/**
 * What a chain family (Solana; EVM next) supplies to the chain-neutral core: its networks, its
 * addresses, signing, a chain adapter per environment and network, and the exchange provider of
 * an environment. The core imports no family; a family imports the core and no other family
 * (test/house/chain-family-imports.test.ts).
 */
export interface ChainFamily<Network extends string = string, View = unknown, Commit = unknown, Recorded = unknown> {
  /** The family's name, as custody and chain sends are keyed by: `solana`, `evm`. */
  readonly name: string;
  readonly networks: readonly Network[];
  readonly addresses: FamilyAddresses;
  readonly signing: FamilySigning;
  /** The chain of an environment's network (sandbox chains in sandbox, configured nodes in production). */
  chain(environment: Environment, network: Network): ChainAdapter;
  /** The routing provider of an environment, when the family swaps there. */
  exchange(environment: Environment): ExchangeProvider<Network, View, Commit, Recorded> | undefined;
}
