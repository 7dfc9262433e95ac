import type { Environment } from '../auth/permissions.js';
import { DomainError } from '../errors.js';
import type { EvmChain, EvmSandboxChain } from './evm-chain.js';
import { EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';

/** The setting a production network's JSON-RPC node would be configured by: `EVM_RPC_URL_ARBITRUM_ONE`. */
export const rpcSetting = (network: EvmNetwork) => `EVM_RPC_URL_${network.replaceAll('-', '_').toUpperCase()}`;

/**
 * The EVM chain of an environment's network. Sandbox networks are the gateway's own chains, given
 * by the wiring (each created on first use); production networks need a JSON-RPC node, which no
 * release serves yet, so they answer 503 naming the setting a node would be configured by.
 */
export class EvmChains {
  private readonly used = new Set<EvmNetwork>();

  constructor(
    private readonly sandbox: ((network: EvmNetwork) => EvmSandboxChain) | undefined,
    /** Told once per process of each sandbox network it uses (the watch for arrivals starts reading it). */
    private readonly firstUse?: (network: EvmNetwork) => Promise<void>,
  ) {}

  /** Whether this process runs sandbox chains (the watch for arrivals has nothing to read without). */
  get sandboxRunning(): boolean {
    return this.sandbox !== undefined;
  }

  chainFor(environment: Environment, network: EvmNetwork): EvmChain {
    return environment === 'sandbox' ? this.sandboxFor(network) : this.production(network);
  }

  sandboxFor(network: EvmNetwork): EvmSandboxChain {
    if (!this.sandbox)
      throw new DomainError('SERVICE_UNAVAILABLE', 'The sandbox EVM chains are not running in this process.');
    if (!this.used.has(network) && this.firstUse) {
      this.used.add(network);
      // Not awaited: a read must not wait for it; it is an idempotent insert, retried by the next process.
      this.firstUse(network).catch(() => this.used.delete(network));
    }
    return this.sandbox(network);
  }

  /** A supported token's contract on an environment's network. */
  tokenContract(environment: Environment, network: EvmNetwork, token: EvmTokenSpec): string {
    if (environment !== 'sandbox') this.production(network);
    return this.sandboxFor(network).tokenAddress(token.symbol);
  }

  /** The token of a network whose contract is `contract` (any case), or undefined. */
  tokenOf(environment: Environment, network: EvmNetwork, contract: string): EvmTokenSpec | undefined {
    const wanted = contract.toLowerCase();
    return EVM_NETWORK_SPECS[network].tokens.find(
      (token) => this.tokenContract(environment, network, token).toLowerCase() === wanted,
    );
  }

  private production(network: EvmNetwork): never {
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      `EVM network ${network} is not available in production: it needs a JSON-RPC node (${rpcSetting(network)}), which is not configured.`,
    );
  }
}
