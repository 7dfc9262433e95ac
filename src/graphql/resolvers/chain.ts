import type { ChainFamilies } from '../../domain/chain/registry.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/**
 * The chain-neutral interfaces (schema/chain.graphql) resolve to the type of the family whose
 * address the value carries, as the registry reads it: each family names its types here.
 */
const TYPE_OF_FAMILY = {
  wallet: { solana: 'SolanaWallet', evm: 'EvmWallet' },
  token: { solana: 'SolanaToken', evm: 'EvmToken' },
  transfer: { solana: 'SolanaTransfer', evm: 'EvmTransfer' },
  quote: { solana: 'SwapQuote', evm: 'EvmSwapQuote' },
} as const satisfies Record<string, Record<string, string>>;

/** The family type of `kind` for a value at `address`; null (a GraphQL error) for an address no family reads. */
function typeOf<K extends keyof typeof TYPE_OF_FAMILY>(
  families: ChainFamilies,
  kind: K,
  address: string,
): (typeof TYPE_OF_FAMILY)[K][keyof (typeof TYPE_OF_FAMILY)[K]] | null {
  const family = families.familyOfAddress(address)?.name as keyof (typeof TYPE_OF_FAMILY)[K] | undefined;
  return family === undefined ? null : (TYPE_OF_FAMILY[kind][family] ?? null);
}

export const chainResolvers: Resolvers = {
  ChainWallet: { __resolveType: (wallet, { services }) => typeOf(services.chainFamilies, 'wallet', wallet.address) },
  ChainToken: { __resolveType: (token, { services }) => typeOf(services.chainFamilies, 'token', token.address) },
  ChainTransfer: {
    __resolveType: (transfer, { services }) => typeOf(services.chainFamilies, 'transfer', transfer.from),
  },
  ChainSwapQuote: {
    __resolveType: (quote, { services }) => typeOf(services.chainFamilies, 'quote', quote.fromToken.address),
  },
};
