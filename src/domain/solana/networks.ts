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

/**
 * Where to look a transaction up. Production: the public explorer, with the cluster when it is
 * not mainnet. Sandbox: the sandbox chains exist only inside the gateway, so a public explorer
 * would show "not found"; the link is the gateway's own transaction path (relative to its base
 * URL), which answers with the transaction for the key that made it.
 */
export function explorerUrl(signature: string, network: SolanaNetwork, environment: 'sandbox' | 'production'): string {
  if (environment === 'sandbox') return `/api/v1/solana/transactions/${signature}`;
  return `https://explorer.solana.com/tx/${signature}${network === 'mainnet-beta' ? '' : `?cluster=${network}`}`;
}
