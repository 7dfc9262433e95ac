import type { SwapDirection } from '../../domain/evm/evm-exchange.js';
import { callerOf } from '../caller.js';
import type { Resolvers } from '../generated/resolvers-types.js';
import { upstreamRead } from '../upstream-reads.js';

const DIRECTIONS = {
  NATIVE_TO_TOKEN: 'native-to-token',
  TOKEN_TO_TOKEN: 'token-to-token',
  TOKEN_TO_NATIVE: 'token-to-native',
} as const satisfies Record<string, SwapDirection>;

const raw = (holder: { amountRaw: bigint }) => holder.amountRaw.toString();

/**
 * The EVM wallet: thin over its domain (src/domain/evm), this gateway's own or an upstream's
 * (facade mode, where each read is asked once per request however often the document names it).
 * The transfer history is the service's alone.
 */
export const evmResolvers: Resolvers = {
  Query: {
    evmWallet: (_root, _args, context) =>
      upstreamRead(context, 'evmWallet', () => context.services.evmWalletDomain.address(callerOf(context))),
    evmNetworks: (_root, _args, context) =>
      upstreamRead(context, 'evmNetworks', () => context.services.evmWalletDomain.networks(callerOf(context))),
    evmBalance: (_root, { network }, context) =>
      upstreamRead(context, `evmBalance:${JSON.stringify([network])}`, () =>
        context.services.evmWalletDomain.nativeBalance(callerOf(context), network),
      ),
    evmTokenBalance: (_root, { network, token }, context) =>
      // A symbol in any case names one token.
      upstreamRead(context, `evmTokenBalance:${JSON.stringify([network, token.toUpperCase()])}`, () =>
        context.services.evmWalletDomain.tokenBalance(callerOf(context), network, token),
      ),
    evmPortfolio: (_root, { network }, context) =>
      upstreamRead(context, `evmPortfolio:${JSON.stringify([network])}`, () =>
        context.services.evmWalletDomain.portfolio(callerOf(context), network),
      ),
    evmTransfer: (_root, { hash }, { principal, services }) => services.evmTransfers.byHash(principal!, hash),
    evmTransfers: (_root, { first }, { principal, services }) => services.evmTransfers.list(principal!, first ?? 20),
    evmSwapQuote: (_root, { network, input }, { principal, services }) =>
      services.evmExchange.quote(principal!, network, DIRECTIONS[input.direction], input),
  },
  Mutation: {
    sendEvmNative: (_root, { network, input }, context) =>
      context.services.evmWalletDomain.sendNative(callerOf(context), network, input, context.idempotencyKey),
    sendEvmToken: (_root, { network, token, input }, context) =>
      context.services.evmWalletDomain.sendToken(callerOf(context), network, token, input, context.idempotencyKey),
    sandboxEvmFaucet: (_root, { network, input }, { principal, services, idempotencyKey }) =>
      services.evmFaucet.fund(principal!, network, input ?? {}, idempotencyKey),
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
