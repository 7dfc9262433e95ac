import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/client.js';
import type { EvmSandboxChain } from './evm-chain.js';
import { EVM_NETWORKS, type EvmNetwork } from './networks.js';
import { SandboxEvmChain } from './sandbox-chain.js';
import { TrieNodeCache } from './sandbox-trie-nodes.js';

export interface SandboxEvmChainsOptions {
  /** This instance's name as a block producer (random by default: one per process). */
  producerId?: string;
  /** How long a block producer's lease holds unrenewed, in milliseconds (10 s). */
  leaseMs?: number;
  /** Trie nodes the process keeps in memory, for every network together (200,000). */
  cachedNodes?: number;
}

/** The sandbox EVM chains of one process: one chain object per network, made on first ask. */
export interface SandboxEvmChains {
  chainFor(network: EvmNetwork): EvmSandboxChain;
}

/**
 * The sandbox EVM chains over `db`, to be made once per process (services.ts): every chain object
 * of a process shares one cache of trie nodes, and each network's chain object is its one producer
 * identity. Nothing is built or read until a network is used.
 */
export function sandboxEvmChains(db: Database, options: SandboxEvmChainsOptions = {}): SandboxEvmChains {
  const cache = new TrieNodeCache(options.cachedNodes);
  const producerId = options.producerId ?? randomUUID();
  const chains = new Map<EvmNetwork, SandboxEvmChain>();
  return {
    chainFor(network) {
      if (!EVM_NETWORKS.includes(network)) throw new Error(`Unknown EVM network ${network}`);
      let chain = chains.get(network);
      if (!chain) {
        chain = new SandboxEvmChain(network, db, cache, { producerId, leaseMs: options.leaseMs });
        chains.set(network, chain);
      }
      return chain;
    },
  };
}
