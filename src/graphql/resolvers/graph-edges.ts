import { windowOf } from '../../domain/keyset.js';
import type { Owner } from '../../domain/activity/owned-rows.js';
import { type Activity, offrampActivity, solanaActivity, walletActivity } from '../../domain/activity/activity.js';
import type { ActivitySource } from '../../domain/activity/activity.js';
import { mayActFor } from '../../domain/auth/principal.js';
import { dateRange } from '../../domain/date-bound.js';
import { notFound } from '../../domain/errors.js';
import { toOfframpOrder } from '../../domain/offramp/offramp-order.js';
import { transferView } from '../../domain/solana/transfer-view.js';
import { koboFrom } from '../../domain/wallet/naira.js';
import { type ConnectionModel, connectionOf } from '../connections.js';
import type { GraphQLContext } from '../context.js';
import type { Resolvers } from '../generated/resolvers-types.js';
import { recordOfActivity, recordOfWalletTransaction, walletActivityOf } from './graph-records.js';
import {
  BILL_EVENT_KINDS,
  DEPOSIT_EVENT_KINDS,
  dataOf,
  OFFRAMP_UPDATE_KINDS,
  PAYOUT_EVENT_KINDS,
  TRANSACTION_EVENT_KINDS,
} from '../../domain/events/payloads.js';

/** The owner a user's edges read: that user, in the caller's environment, and only a user it may act for. */
function ownerOf(context: GraphQLContext, user: { id: string }): Owner {
  const principal = context.principal!;
  if (!mayActFor(principal, user.id)) throw notFound('User');
  return { userId: user.id, environment: principal.environment };
}

const opt = <T>(value: T | null | undefined): T | undefined => value ?? undefined;

/** A row the caller was just led to, gone in between (or out of scope): a 404, not a TypeError's 500. */
function present<T>(row: T | null | undefined, what: string): T {
  if (row == null) throw notFound(what);
  return row;
}

/** A feed key's row through the loaders (the feed query returns keys only). */
async function activityOf(context: GraphQLContext, key: { source: string; rowId: string }): Promise<Activity> {
  const loaders = context.loaders;
  switch (key.source as ActivitySource) {
    case 'wallet':
      return walletActivity(present(await loaders.walletTransactionById.load(key.rowId), 'Transaction'));
    case 'solana':
      return solanaActivity(present(await loaders.solanaTransferById.load(key.rowId), 'Transaction'));
    default:
      return offrampActivity(present(await loaders.offrampOrderById.load(key.rowId), 'Transaction'));
  }
}

const totalCount = { totalCount: (connection: ConnectionModel<unknown>) => connection.countAll() };

export const graphEdgeResolvers: Resolvers = {
  User: {
    wallet: (user, _args, context) =>
      context.services.wallet.balance({ ...context.principal!, ...ownerOf(context, user) }),
    virtualAccount: async (user, _args, context) => {
      const owner = ownerOf(context, user);
      return (await context.services.accountLists.virtualAccount(owner)) ?? null;
    },
    transactions: async (user, { filter, ...window }, context) => {
      const listed = await context.services.accountLists.activity(
        ownerOf(context, user),
        { kinds: opt(filter?.kinds), status: opt(filter?.status), from: opt(filter?.from), to: opt(filter?.to) },
        windowOf(window),
      );
      return connectionOf(listed.page, (key) => activityOf(context, key), listed.countAll);
    },
    walletTransactions: async (user, { filter, ...window }, context) => {
      const owner = ownerOf(context, user);
      const listed = await context.services.wallet.transactionWindow(
        { ...context.principal!, ...owner },
        {
          type: opt(filter?.type),
          status: opt(filter?.status),
          // The same date rules as the root field: a date is a whole Africa/Lagos day.
          ...dateRange(opt(filter?.from), opt(filter?.to), { from: 'from', to: 'to' }),
          minAmount: filter?.minAmount == null ? undefined : koboFrom(filter.minAmount, 'minAmount'),
          maxAmount: filter?.maxAmount == null ? undefined : koboFrom(filter.maxAmount, 'maxAmount'),
          search: opt(filter?.search),
        },
        windowOf(window),
      );
      return connectionOf(listed.page, (row) => row, listed.countAll);
    },
    deposits: async (user, { status, ...window }, context) => {
      const listed = await context.services.accountLists.deposits(
        ownerOf(context, user),
        opt(status),
        windowOf(window),
      );
      return connectionOf(listed.page, (row) => row, listed.countAll);
    },
    payouts: async (user, { status, ...window }, context) => {
      const listed = await context.services.accountLists.payouts(ownerOf(context, user), opt(status), windowOf(window));
      return connectionOf(listed.page, (row) => row, listed.countAll);
    },
    paymentMethods: (user, _args, context) =>
      context.services.paymentMethods.list({ ...context.principal!, ...ownerOf(context, user) }),
    billRecords: async (user, { type, status, ...window }, context) => {
      const listed = await context.services.accountLists.billRecords(
        ownerOf(context, user),
        { type: opt(type), status: opt(status) },
        windowOf(window),
      );
      return connectionOf(listed.page, (row) => row, listed.countAll);
    },
    billSchedules: (user, _args, context) =>
      context.services.bills.schedules({ ...context.principal!, ...ownerOf(context, user) }),
    billBeneficiaries: (user, _args, context) =>
      context.services.bills.beneficiaries({ ...context.principal!, ...ownerOf(context, user) }),
    solanaWallet: async (user, _args, context) => ({
      address: (await context.services.solanaWallets.walletOf({ ...context.principal!, ...ownerOf(context, user) }))
        .address,
    }),
    solanaTransfers: async (user, window, context) => {
      const listed = await context.services.accountLists.solanaTransfers(ownerOf(context, user), windowOf(window));
      return connectionOf(listed.page, transferView, listed.countAll);
    },
    offrampOrders: async (user, { status, open, ...window }, context) => {
      const listed = await context.services.accountLists.offrampOrders(
        ownerOf(context, user),
        { status: opt(status), open: opt(open) },
        windowOf(window),
      );
      return connectionOf(listed.page, toOfframpOrder, listed.countAll);
    },
    webhookEndpoints: (user, _args, context) =>
      context.services.webhooks.list({ ...context.principal!, ...ownerOf(context, user) }),
  },
  SolanaWallet: {
    // The wallet is always the caller's own: the only way to reach one is the caller's user.
    portfolio: (_wallet, { network }, { principal, services }) =>
      services.solanaPortfolio.portfolio(principal!, network),
    balance: (_wallet, { network }, { principal, services }) =>
      services.solanaPortfolio.solBalance(principal!, network),
  },
  Business: {
    customers: async (business, { status, ...window }, context) => {
      const principal = context.principal!;
      if (!mayActFor(principal, business.ownerUserId)) throw notFound('Business');
      const { customers } = context.services;
      const page = await context.loaders.customerWindow(windowOf(window), opt(status)).load(business.id);
      return connectionOf(
        page,
        (row) => row,
        () => customers.countOf(principal, business.id, opt(status)),
      );
    },
  },
  BusinessCustomer: {
    business: async (customer, _args, context) => {
      const business = await context.loaders.businessById.load(customer.businessId);
      if (!business) throw notFound('Business');
      return business;
    },
  },
  Transaction: {
    record: (activity, _args, context) => recordOfActivity(context.loaders, activity) as never,
    walletTransaction: (activity) => (activity.source === 'wallet' ? activity.row : null),
  },
  TransactionRecord: {
    __resolveType: (record) => (record as unknown as { __typename: string }).__typename as never,
  },
  WalletTransaction: {
    transaction: (row) => walletActivity(row),
    record: (row, _args, context) => recordOfWalletTransaction(context.loaders, row) as never,
  },
  BillRecord: { transaction: (record, _args, context) => walletActivityOf(context.loaders, record.reference, 'BILL') },
  Deposit: {
    transaction: (deposit, _args, context) => walletActivityOf(context.loaders, deposit.reference, 'DEPOSIT'),
    paymentMethod: (deposit, _args, context) =>
      deposit.paymentMethodId ? context.loaders.paymentMethodById.load(deposit.paymentMethodId) : null,
  },
  Payout: {
    transaction: (payout, _args, context) => walletActivityOf(context.loaders, payout.reference, 'WITHDRAWAL'),
  },
  SolanaTransfer: {
    transaction: async (view, _args, context) =>
      solanaActivity(
        present(await context.loaders.solanaTransferById.load(present(view.id, 'Transaction')), 'Transaction'),
      ),
    quote: async (view, _args, context) => {
      if (view.kind !== 'swap') return null;
      const row = await context.loaders.solanaTransferById.load(present(view.id, 'Transaction'));
      return row?.quoteId ? context.loaders.swapQuoteById.load(row.quoteId) : null;
    },
  },
  OfframpOrder: {
    transaction: async (order, _args, context) =>
      offrampActivity(present(await context.loaders.offrampOrderById.load(order.id), 'Transaction')),
  },
  // Event payloads carry ids and references; these read the records as they are now.
  WalletUpdate: {
    transaction: async (event, _args, context) => {
      let row: Awaited<ReturnType<typeof context.loaders.walletTransactionById.load>>;
      if (event.type.startsWith('transaction.')) {
        const data = dataOf(event, TRANSACTION_EVENT_KINDS);
        // A chain transaction's event names no wallet transaction.
        if (!('id' in data)) return null;
        row = await context.loaders.walletTransactionById.load(data.id);
      } else {
        const { reference } = dataOf(event, [...DEPOSIT_EVENT_KINDS, ...PAYOUT_EVENT_KINDS]);
        row = await context.loaders.walletTransactionByReference.load(reference);
      }
      return row ? walletActivity(row) : null;
    },
    deposit: (event, _args, context) =>
      event.type.startsWith('deposit.')
        ? context.loaders.depositByReference.load(dataOf(event, DEPOSIT_EVENT_KINDS).reference)
        : null,
    payout: (event, _args, context) =>
      event.type.startsWith('payout.')
        ? context.loaders.payoutByReference.load(dataOf(event, PAYOUT_EVENT_KINDS).reference)
        : null,
  },
  BillUpdate: {
    record: (event, _args, context) =>
      context.loaders.billRecordByReference.load(dataOf(event, BILL_EVENT_KINDS).reference),
  },
  OfframpOrderUpdate: {
    order: async (event, _args, context) => {
      const row = await context.loaders.offrampOrderByReference.load(dataOf(event, OFFRAMP_UPDATE_KINDS).reference);
      return row ? toOfframpOrder(row) : null;
    },
  },
  TransactionConnection: totalCount,
  WalletTransactionConnection: totalCount,
  DepositConnection: totalCount,
  PayoutConnection: totalCount,
  BillRecordConnection: totalCount,
  OfframpOrderConnection: totalCount,
  SolanaTransferConnection: totalCount,
  BusinessCustomerConnection: totalCount,
};
