import { badInput } from '../errors.js';

/** The seed's cluster names. In sandbox each is its own chain; in production each has an RPC URL. */
export const SOLANA_NETWORKS = ['mainnet-beta', 'devnet', 'testnet'] as const;
export type SolanaNetwork = (typeof SOLANA_NETWORKS)[number];
export const DEFAULT_NETWORK: SolanaNetwork = 'mainnet-beta';

export function checkNetwork(value: string | null | undefined, field = 'network'): SolanaNetwork {
  if (value === undefined || value === null || value === '') return DEFAULT_NETWORK;
  if (!(SOLANA_NETWORKS as readonly string[]).includes(value))
    throw badInput(field, `${field} must be one of ${SOLANA_NETWORKS.join(', ')}.`);
  return value as SolanaNetwork;
}

/** An explorer link for a transaction, with the cluster when it is not mainnet. */
export function explorerUrl(signature: string, network: SolanaNetwork): string {
  return `https://explorer.solana.com/tx/${signature}${network === 'mainnet-beta' ? '' : `?cluster=${network}`}`;
}
