import type { Environment } from '../auth/permissions.js';
import type { ChainFamily } from '../chain/family.js';
import type { EvmExchangeProvider, EvmSwapQuoteView } from './evm-exchange-provider.js';
import type { EvmChains } from './evm-chains.js';
import { evmAddresses } from './evm-keys.js';
import { evmSigning } from './evm-signing.js';
import { EVM_NETWORKS, type EvmNetwork } from './networks.js';

/** The EVM family swaps through a router call the exchange signs as a send: no venue records a swap itself. */
export type EvmFamily = ChainFamily<EvmNetwork, EvmSwapQuoteView, never, never>;

/**
 * The EVM as a chain family of the core (chain/family.ts): secp256k1 keys whose address is the
 * checksummed 0x address (the same on every network), EIP-1559 transactions signed through the
 * custody's signature of their keccak hash (65 bytes with the recovery id: evm-signing.ts), and the
 * environment's chains (the sandbox's own in sandbox; production needs JSON-RPC nodes).
 */
export function evmFamily(
  chains: EvmChains,
  exchange: (environment: Environment) => EvmExchangeProvider | undefined = () => undefined,
): EvmFamily {
  return {
    name: 'evm',
    networks: EVM_NETWORKS,
    addresses: evmAddresses,
    signing: evmSigning,
    chain: (environment, network) => chains.chainFor(environment, network),
    exchange,
  };
}
