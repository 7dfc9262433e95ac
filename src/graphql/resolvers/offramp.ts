import { upstreamRead } from '../upstream-reads.js';
import { dateRange } from '../../domain/date-bound.js';
import type { OfframpStatus } from '../../domain/offramp/catalogue.js';
import { OFFRAMP_EVENT_KINDS } from '../../domain/offramp/catalogue.js';
import type { StoredEvent } from '../../domain/events/event.js';
import { dataOf, OFFRAMP_UPDATE_KINDS } from '../../domain/events/payloads.js';
import { callerOf } from '../caller.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/** The event's `data` as the offramp events' type. */
const order = (event: StoredEvent) => dataOf(event, OFFRAMP_UPDATE_KINDS);

export const offrampResolvers: Resolvers = {
  OfframpNetwork: { arbitrum_one: 'arbitrum-one', bnb_smart_chain: 'bnb-smart-chain' },
  Query: {
    offrampAssets: (_root, _args, context) =>
      upstreamRead(context, 'offrampAssets', () => context.services.offrampDomain.assets(callerOf(context))),
    offrampQuote: (_root, args, context) =>
      upstreamRead(context, `offrampQuote:${JSON.stringify(args)}`, () =>
        context.services.offrampDomain.quote(callerOf(context), args),
      ),
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
    reference: (event) => order(event).reference,
    status: (event) => order(event).status as OfframpStatus,
    amount: (event) => order(event).amount,
    token: (event) => order(event).token as never,
    network: (event) => order(event).network as never,
    fiatAmount: (event) => order(event).fiatAmount,
    fiatCurrency: (event) => order(event).fiatCurrency as never,
    bankName: (event) => order(event).bankName,
    accountNumber: (event) => order(event).accountNumber,
  },
};
