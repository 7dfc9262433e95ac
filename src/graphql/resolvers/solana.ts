import { upstreamRead } from '../upstream-reads.js';
import { callerOf } from '../caller.js';
import type { Resolvers } from '../generated/resolvers-types.js';

const raw = (holder: { amountRaw: bigint }) => holder.amountRaw.toString();

export const solanaResolvers: Resolvers = {
  Query: {
    solanaWallet: (_root, _args, context) =>
      upstreamRead(context, 'solanaWallet', () => context.services.solanaWalletDomain.address(callerOf(context))),
    solanaBalance: (_root, { network }, { principal, services }) =>
      services.solanaPortfolio.solBalance(principal!, network),
    solanaTokenBalance: (_root, { mint, network }, { principal, services }) =>
      services.solanaPortfolio.tokenBalance(principal!, mint, network),
    solanaPortfolio: (_root, { network }, { principal, services }) =>
      services.solanaPortfolio.portfolio(principal!, network),
    walletPortfolio: async (_root, { network }, { principal, services }) => ({
      ngn: await services.wallet.balance(principal!),
      solana: await services.solanaPortfolio.portfolio(principal!, network),
    }),
    swapQuote: (_root, { input }, context) =>
      upstreamRead(context, `swapQuote:${JSON.stringify(input)}`, () =>
        context.services.swapQuotesDomain.quote(callerOf(context), input),
      ),
    solanaTransfer: (_root, { signature }, { principal, services }) =>
      services.solanaTransfers.bySignature(principal!, signature),
    solanaTransfers: (_root, { first }, { principal, services }) =>
      services.solanaTransfers.list(principal!, first ?? 20),
  },
  Mutation: {
    transferSolanaToken: (_root, { input }, context) =>
      context.services.solanaWalletDomain.transferToken(callerOf(context), input, context.idempotencyKey),
    transferSol: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.solanaTransfers.transferSol(principal!, input, idempotencyKey),
    swapTokens: (_root, { input }, context) =>
      context.services.swapQuotesDomain.swap(callerOf(context), input, context.idempotencyKey),
    sandboxSolanaFaucet: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.sandboxFaucet.fund(principal!, input ?? {}, idempotencyKey),
  },
  SolanaTokenBalance: { amountRaw: raw },
  SolanaTransfer: {
    amountRaw: (view) => {
      // Only an upstream's transfer lacks it, and the graph a facade serves has no amountRaw on it.
      if (view.amountRaw === undefined) throw new Error('A transfer read from an upstream has no amountRaw.');
      return view.amountRaw.toString();
    },
  },
};
