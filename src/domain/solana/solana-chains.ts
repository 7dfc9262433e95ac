import type { Environment } from '../auth/permissions.js';
import { DomainError } from '../errors.js';
import type { SolanaChain } from './chain.js';
import type { RpcChain } from './rpc-chain.js';
import type { SolanaNetwork } from './networks.js';

/**
 * The chain behind each environment and network: sandbox networks are litesvm chains, production
 * ones RPC endpoints from configuration. A production network without a URL answers 503; it never
 * falls back to the sandbox.
 */
export class SolanaChains {
  constructor(
    private readonly sandbox: (network: SolanaNetwork) => SolanaChain,
    private readonly production: Partial<Record<SolanaNetwork, RpcChain>>,
  ) {}

  chainFor(environment: Environment, network: SolanaNetwork): SolanaChain {
    return environment === 'sandbox' ? this.sandbox(network) : this.productionChain(network);
  }

  /** A production network's RPC chain: what only production does (simulating others' transactions) needs it. */
  productionChain(network: SolanaNetwork): RpcChain {
    const chain = this.production[network];
    if (!chain)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `Solana ${network} is not configured for production (SOLANA_RPC_URL_${network.toUpperCase().replace('-', '_')} is unset).`,
      );
    return chain;
  }
}
