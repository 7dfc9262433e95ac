import { dateRange } from '../../domain/date-bound.js';
import type { OfframpStatus } from '../../domain/offramp/catalogue.js';
import { OFFRAMP_EVENT_KINDS } from '../../domain/offramp/catalogue.js';
import type { Resolvers } from '../generated/resolvers-types.js';

const dataOf = (event: { data: Record<string, unknown> }) => event.data;

export const offrampResolvers: Resolvers = {
  OfframpNetwork: { arbitrum_one: 'arbitrum-one', bnb_smart_chain: 'bnb-smart-chain' },
  Query: {
    offrampAssets: (_root, _args, { principal, services }) => services.offramp.assets(principal!),
    offrampQuote: (_root, args, { principal, services }) => services.offramp.quote(principal!, args),
    offrampPayoutBanks: (_root, { fiat }, { principal, services }) => services.offramp.payoutBanks(principal!, fiat),
    offrampOrders: (_root, { filter, page, limit }, { principal, services }) =>
      services.offramp.history(
        principal!,
        {
          status: filter?.status ?? undefined,
          token: filter?.token ?? undefined,
          network: filter?.network ?? undefined,
          fiat: filter?.fiat ?? undefined,
          ...dateRange(filter?.from ?? undefined, filter?.to ?? undefined, { from: 'from', to: 'to' }),
        },
        page ?? 1,
        limit ?? 20,
      ),
    offrampOrder: (_root, { reference }, { principal, services }) => services.offramp.track(principal!, reference),
  },
  Mutation: {
    verifyOfframpBankAccount: (_root, { input }, { principal, services }) =>
      services.offramp.verifyAccount(principal!, input),
    initiateOfframpOrder: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.offramp.initiate(principal!, input, idempotencyKey),
    simulateOfframpDeposit: (_root, { reference }, { principal, services, idempotencyKey }) =>
      services.offramp.simulateDeposit(principal!, reference, idempotencyKey),
  },
  Subscription: {
    offrampOrderUpdates: {
      subscribe: (_root, { after }, { principal, services }) =>
        services.eventFeed.subscribe(principal!, OFFRAMP_EVENT_KINDS, after ?? undefined),
      resolve: (event: unknown) => event as never,
    },
  },
  OfframpOrderUpdate: {
    eventId: (event) => event.id,
    seq: (event) => event.seq ?? 0,
    reference: (event) => String(dataOf(event)['reference']),
    status: (event) => dataOf(event)['status'] as OfframpStatus,
    amount: (event) => String(dataOf(event)['amount']),
    token: (event) => dataOf(event)['token'] as never,
    network: (event) => dataOf(event)['network'] as never,
    fiatAmount: (event) => Number(dataOf(event)['fiatAmount']),
    fiatCurrency: (event) => dataOf(event)['fiatCurrency'] as never,
    bankName: (event) => String(dataOf(event)['bankName']),
    accountNumber: (event) => String(dataOf(event)['accountNumber']),
  },
};
