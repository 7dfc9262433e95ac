import { dateRange } from '../../domain/date-bound.js';
import type { Authorization } from '../../domain/payments/payments-provider.js';
import { badInput } from '../../domain/errors.js';
import { koboFrom, nairaNumber } from '../../domain/wallet/naira.js';
import type { StoredEvent } from '../../domain/events/event.js';
import {
  DEPOSIT_EVENT_KINDS,
  dataOf,
  type MoneyEventKind,
  PAYOUT_EVENT_KINDS,
  TRANSACTION_EVENT_KINDS,
} from '../../domain/events/payloads.js';
import { callerOf } from '../caller.js';
import type { GraphQLContext } from '../context.js';
import type { Resolvers } from '../generated/resolvers-types.js';

const WALLET_UPDATE_KINDS = [...DEPOSIT_EVENT_KINDS, ...PAYOUT_EVENT_KINDS, ...TRANSACTION_EVENT_KINDS];
/** The event's `data` as the wallet events' type (the three streams share WalletUpdate). */
const wallet = (event: StoredEvent) => dataOf(event, WALLET_UPDATE_KINDS);

const naira = (kobo: bigint) => nairaNumber(kobo);
const kobo = (value: bigint) => Number(value);
const optionalKobo = (value: number | null | undefined, field: string) =>
  value === null || value === undefined ? undefined : koboFrom(value, field);

function authorizationOf(input: {
  type: 'pin' | 'otp' | 'three_ds';
  pin?: string | null;
  otp?: string | null;
}): Authorization {
  if (input.type === 'pin') {
    if (!input.pin) throw badInput('pin', 'pin is required for a pin authorization.');
    return { type: 'pin', pin: input.pin };
  }
  if (input.type === 'otp') {
    if (!input.otp) throw badInput('otp', 'otp is required for an otp authorization.');
    return { type: 'otp', otp: input.otp };
  }
  return { type: '3ds' };
}

const update = (kinds: readonly MoneyEventKind[]) => ({
  subscribe: (_root: unknown, { after }: { after?: number | null }, { principal, services }: GraphQLContext) =>
    services.eventFeed.subscribe(principal!, kinds, after ?? undefined),
  resolve: (event: StoredEvent) => event,
});

export const walletResolvers: Resolvers = {
  DepositStatus: { INITIATED: 'initiated', PENDING: 'pending', COMPLETED: 'completed', FAILED: 'failed' },
  Query: {
    walletBalance: (_root, _args, { principal, services }) => services.wallet.balance(principal!),
    walletLedger: (_root, { first, before }, { principal, services }) =>
      services.wallet.ledgerEntries(principal!, first ?? 50, before ?? undefined),
    walletTransactions: (_root, { filter, page, limit }, { principal, services }) =>
      services.wallet.transactions(
        principal!,
        {
          type: filter?.type ?? undefined,
          status: filter?.status ?? undefined,
          ...dateRange(filter?.from ?? undefined, filter?.to ?? undefined, { from: 'from', to: 'to' }),
          minAmount: optionalKobo(filter?.minAmount, 'minAmount'),
          maxAmount: optionalKobo(filter?.maxAmount, 'maxAmount'),
          search: filter?.search ?? undefined,
        },
        page ?? 1,
        limit ?? 20,
      ),
    walletTransaction: (_root, { id }, { principal, services }) => services.wallet.transaction(principal!, id),
    walletTransactionByReference: (_root, { reference }, { principal, services }) =>
      services.wallet.transactionByReference(principal!, reference),
    paymentMethods: (_root, _args, { principal, services }) => services.paymentMethods.list(principal!),
    paymentMethod: (_root, { id }, { principal, services }) => services.paymentMethods.get(principal!, id),
    deposit: (_root, { reference }, { principal, services }) => services.deposits.get(principal!, reference),
    payout: (_root, { reference }, { principal, services }) => services.payouts.get(principal!, reference),
    banks: (_root, _args, { principal, services }) => services.payouts.banks(principal!),
    resolveBankAccount: (_root, args, { principal, services }) => services.payouts.resolveAccount(principal!, args),
  },
  Mutation: {
    depositWithPaymentMethod: (_root, { input }, context) =>
      context.services.depositsDomain.withPaymentMethod(callerOf(context), input, context.idempotencyKey),
    depositByBankTransfer: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.deposits.bankTransfer(principal!, input, idempotencyKey),
    depositByUssd: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.deposits.ussd(principal!, input, idempotencyKey),
    createPaymentLink: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.deposits.paymentLink(principal!, input, idempotencyKey),
    fundWallet: (_root, { input }, { principal, services, idempotencyKey }) => {
      const { method, paymentMethodId, bankCode, title, ...common } = input;
      switch (method) {
        case 'card':
          return services.deposits.card(
            principal!,
            { ...common, paymentMethodId: paymentMethodId ?? null },
            idempotencyKey,
          );
        case 'ussd':
          return services.deposits.ussd(principal!, { ...common, bankCode: bankCode ?? '' }, idempotencyKey);
        case 'payment_link':
          return services.deposits.paymentLink(principal!, { ...common, title: title ?? null }, idempotencyKey);
        default:
          return services.deposits.bankTransfer(principal!, common, idempotencyKey);
      }
    },
    authorizeDeposit: (_root, { reference, input }, { principal, services, idempotencyKey }) =>
      services.deposits.authorize(principal!, reference, authorizationOf(input), idempotencyKey),
    createVirtualAccount: (_root, _args, { principal, services }) => services.deposits.permanentAccount(principal!),
    simulateVirtualAccountTransfer: (_root, { amount }, { principal, services, idempotencyKey }) =>
      services.deposits.simulateVirtualAccountTransfer(principal!, amount, idempotencyKey),
    withdraw: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.payouts.withdraw(principal!, input, idempotencyKey),
    transfer: (_root, { input }, { principal, services, idempotencyKey }) =>
      services.wallet.transfer(principal!, input, idempotencyKey),
    createPaymentMethod: (_root, { input }, { principal, services }) =>
      services.paymentMethods.create(principal!, input),
    deletePaymentMethod: (_root, { id }, { principal, services }) => services.paymentMethods.remove(principal!, id),
    setDefaultPaymentMethod: (_root, { id }, { principal, services }) =>
      services.paymentMethods.setDefault(principal!, id),
  },
  Subscription: {
    depositUpdates: update(DEPOSIT_EVENT_KINDS),
    payoutUpdates: update(PAYOUT_EVENT_KINDS),
    transactionUpdates: update(TRANSACTION_EVENT_KINDS),
  },
  WalletUpdate: {
    eventId: (event) => event.id,
    seq: (event) => event.seq ?? 0,
    reference: (event) => wallet(event).reference,
    status: (event) => wallet(event).status,
    // Naira for wallet events; a chain transaction's is decimal text in token units.
    amount: (event) => Number(wallet(event).amount),
    data: (event) => event.data,
  },
  WalletBalance: {
    available: (b) => naira(b.available),
    availableKobo: (b) => kobo(b.available),
    held: (b) => naira(b.held),
    heldKobo: (b) => kobo(b.held),
    total: (b) => naira(b.total),
    totalKobo: (b) => kobo(b.total),
  },
  LedgerEntry: {
    amount: (e) => naira(e.amount),
    amountKobo: (e) => kobo(e.amount),
    balanceAfter: (e) => naira(e.balanceAfter),
  },
  WalletTransaction: {
    amount: (t) => naira(t.amount),
    amountKobo: (t) => kobo(t.amount),
    fee: (t) => naira(t.fee),
  },
  Deposit: {
    amount: (d) => naira(d.amount),
    amountKobo: (d) => kobo(d.amount),
    // An upstream's deposit result gives these two; this gateway's own follow from method and nextAction.
    customization: (d) =>
      d.customization !== undefined
        ? d.customization
        : { title: d.method === 'payment_link' ? 'Wallet funding' : null },
    customer: (d) => (d.customer as { email: string; phoneNumber: string; name: string } | null) ?? null,
    expiry_datetime: (d) => d.expiresAt,
    note: (d) =>
      d.note !== undefined
        ? d.note
        : ((d.nextAction as { payment_instruction?: { note?: string } } | null)?.payment_instruction?.note ?? null),
    nextAction: (d) => (d.nextAction as never) ?? null,
  },
  Payout: {
    amount: (p) => naira(p.amount),
    amountKobo: (p) => kobo(p.amount),
    fee: (p) => naira(p.fee),
    currency: () => 'NGN',
  },
};
