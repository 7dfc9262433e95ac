import type { SwapDirection } from '../../domain/evm/evm-exchange.js';
import type { Resolvers } from '../generated/resolvers-types.js';

const DIRECTIONS = {
  NATIVE_TO_TOKEN: 'native-to-token',
  TOKEN_TO_TOKEN: 'token-to-token',
  TOKEN_TO_NATIVE: 'token-to-native',
} as const satisfies Record<string, SwapDirection>;

const raw = (holder: { amountRaw: bigint }) => holder.amountRaw.toString();

/** The EVM wallet: thin over its reads and transfers (src/domain/evm). */
export const evmResolvers: Resolvers = {
  Query: {
    evmWallet: (_root, _args, { principal, services }) => services.evmReads.address(principal!),
    evmNetworks: (_root, _args, { principal, services }) => services.evmReads.networks(principal!.environment),
    evmBalance: (_root, { network }, { principal, services }) => services.evmReads.nativeBalance(principal!, network),
    evmTokenBalance: (_root, { network, token }, { principal, services }) =>
      services.evmReads.tokenBalance(principal!, network, token),
    evmPortfolio: (_root, { network }, { principal, services }) => services.evmReads.portfolio(principal!, network),
    evmTransfer: (_root, { hash }, { principal, services }) => services.evmTransfers.byHash(principal!, hash),
    evmTransfers: (_root, { first }, { principal, services }) => services.evmTransfers.list(principal!, first ?? 20),
    evmSwapQuote: (_root, { network, input }, { principal, services }) =>
      services.evmExchange.quote(principal!, network, DIRECTIONS[input.direction], input),
  },
  Mutation: {
    sendEvmNative: (_root, { network, input }, { principal, services, idempotencyKey }) =>
      services.evmTransfers.sendNative(principal!, network, input, idempotencyKey),
    sendEvmToken: (_root, { network, token, input }, { principal, services, idempotencyKey }) =>
      services.evmTransfers.sendToken(principal!, network, token, input, idempotencyKey),
    swapEvmTokens: (_root, { network, input }, { principal, services, idempotencyKey }) =>
      services.evmExchange.swap(principal!, network, input, idempotencyKey),
  },
  EvmSwapResult: { outputAmountRaw: (result) => result.outputAmountRaw.toString() },
  EvmBalance: { amountRaw: raw },
  EvmTransfer: {
    amountRaw: raw,
    nonce: (view) => view.nonce.toString(),
    maxFeeRaw: (view) => view.maxFeeRaw.toString(),
  },
};
