import { badInput } from '../errors.js';

/**
 * The EVM networks the gateway serves, by the ids the offramp already uses (Paycrest's spelling:
 * `arbitrum-one`, `bnb-smart-chain`). In sandbox each is a chain of its own inside the gateway,
 * created on first use; in production each needs a JSON-RPC URL.
 */
export const EVM_NETWORKS = [
  'ethereum',
  'base',
  'polygon',
  'arbitrum-one',
  'bnb-smart-chain',
  'optimism',
  'lisk',
  'scroll',
] as const;
export type EvmNetwork = (typeof EVM_NETWORKS)[number];

/** A token a network supports: its symbol as the API names it, and its decimals on that network. */
export interface EvmTokenSpec {
  symbol: 'USDT' | 'USDC' | 'CNGN' | 'WETH' | 'WPOL' | 'WBNB';
  name: string;
  decimals: number;
  /** The wrapped native coin (WETH9's shape), which the exchange routes through. */
  wrapsNative?: true;
  /**
   * An allowance can only be set from zero (Tether's USDT on Ethereum reverts `approve` over a
   * non-zero allowance): a swap resets a leftover allowance to 0 before approving its amount.
   */
  approveFromZero?: true;
}

export interface EvmNetworkSpec {
  id: EvmNetwork;
  chainId: number;
  name: string;
  native: { symbol: 'ETH' | 'POL' | 'BNB'; name: string; decimals: 18 };
  /** The public explorer's transaction page prefix (production; the sandbox links to the gateway). */
  explorer: string;
  /**
   * Whether a transaction also pays a data fee for posting to L1 (the OP stack and Scroll), which a
   * hold must cover beside gas × fee cap.
   */
  dataFee: boolean;
  tokens: readonly EvmTokenSpec[];
}

const usdt = (decimals = 6): EvmTokenSpec => ({ symbol: 'USDT', name: 'Tether USD', decimals });
const usdc = (decimals = 6): EvmTokenSpec => ({ symbol: 'USDC', name: 'USD Coin', decimals });
// cNGN's issuer deploys it with 6 decimals on every EVM network it lists.
const cngn: EvmTokenSpec = { symbol: 'CNGN', name: 'cNGN', decimals: 6 };
const weth: EvmTokenSpec = { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, wrapsNative: true };
const ether = { symbol: 'ETH', name: 'Ether', decimals: 18 } as const;

/**
 * Each network's native coin and supported tokens with their real decimals: USDT and USDC are 6
 * everywhere except BNB Smart Chain, where the pegged tokens use 18; cNGN where its issuer lists it
 * (ethereum, base, polygon, bnb-smart-chain).
 */
export const EVM_NETWORK_SPECS: Readonly<Record<EvmNetwork, EvmNetworkSpec>> = {
  ethereum: {
    id: 'ethereum',
    chainId: 1,
    name: 'Ethereum',
    native: ether,
    explorer: 'https://etherscan.io/tx/',
    dataFee: false,
    tokens: [{ ...usdt(), approveFromZero: true }, usdc(), cngn, weth],
  },
  base: {
    id: 'base',
    chainId: 8453,
    name: 'Base',
    native: ether,
    explorer: 'https://basescan.org/tx/',
    dataFee: true,
    tokens: [usdt(), usdc(), cngn, weth],
  },
  polygon: {
    id: 'polygon',
    chainId: 137,
    name: 'Polygon PoS',
    native: { symbol: 'POL', name: 'Polygon Ecosystem Token', decimals: 18 },
    explorer: 'https://polygonscan.com/tx/',
    dataFee: false,
    tokens: [usdt(), usdc(), cngn, { symbol: 'WPOL', name: 'Wrapped POL', decimals: 18, wrapsNative: true }],
  },
  'arbitrum-one': {
    id: 'arbitrum-one',
    chainId: 42161,
    name: 'Arbitrum One',
    native: ether,
    explorer: 'https://arbiscan.io/tx/',
    dataFee: false,
    tokens: [usdt(), usdc(), weth],
  },
  'bnb-smart-chain': {
    id: 'bnb-smart-chain',
    chainId: 56,
    name: 'BNB Smart Chain',
    native: { symbol: 'BNB', name: 'BNB', decimals: 18 },
    explorer: 'https://bscscan.com/tx/',
    dataFee: false,
    tokens: [usdt(18), usdc(18), cngn, { symbol: 'WBNB', name: 'Wrapped BNB', decimals: 18, wrapsNative: true }],
  },
  optimism: {
    id: 'optimism',
    chainId: 10,
    name: 'OP Mainnet',
    native: ether,
    explorer: 'https://optimistic.etherscan.io/tx/',
    dataFee: true,
    tokens: [usdt(), usdc(), weth],
  },
  lisk: {
    id: 'lisk',
    chainId: 1135,
    name: 'Lisk',
    native: ether,
    explorer: 'https://blockscout.lisk.com/tx/',
    dataFee: true,
    tokens: [usdt(), usdc(), weth],
  },
  scroll: {
    id: 'scroll',
    chainId: 534352,
    name: 'Scroll',
    native: ether,
    explorer: 'https://scrollscan.com/tx/',
    dataFee: true,
    tokens: [usdt(), usdc(), weth],
  },
};

/** The network a path or argument names; anything else is a 400 naming `field` and the choices. */
export function checkEvmNetwork(value: string | null | undefined, field = 'network'): EvmNetwork {
  if (value !== undefined && value !== null && (EVM_NETWORKS as readonly string[]).includes(value))
    return value as EvmNetwork;
  throw badInput(field, `${field} must be one of ${EVM_NETWORKS.join(', ')}.`);
}

/** A token of `network` by symbol (any case) ; anything else is a 400 naming `field` and the choices. */
export function checkEvmToken(network: EvmNetwork, value: string | null | undefined, field = 'token'): EvmTokenSpec {
  const tokens = EVM_NETWORK_SPECS[network].tokens;
  const found = tokens.find((token) => token.symbol === value?.toUpperCase());
  if (found) return found;
  throw badInput(field, `${field} must be one of ${tokens.map((token) => token.symbol).join(', ')} on ${network}.`);
}
