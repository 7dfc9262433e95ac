import { upstreamRead } from '../upstream-reads.js';
import type { BillRecord } from '../../domain/bills/bill-record.js';
import type { BillPaymentInput } from '../../domain/bills/bills-service.js';
import { notInFacade } from '../../domain/facade/not-in-facade.js';
import type { StoredEvent } from '../../domain/events/event.js';
import { BILL_EVENT_KINDS, dataOf } from '../../domain/events/payloads.js';
import { nairaNumber } from '../../domain/wallet/naira.js';
import { callerOf } from '../caller.js';
import type { GraphQLContext } from '../context.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/** The event's `data` as the bill events' type. */
const bill = (event: StoredEvent) => dataOf(event, BILL_EVENT_KINDS);

/** Only the events of one bill, without losing the source's prompt `return`. */
function forReference(
  source: AsyncIterableIterator<StoredEvent>,
  reference: string | null | undefined,
): AsyncIterableIterator<StoredEvent> {
  if (!reference) return source;
  return {
    async next() {
      for (;;) {
        const step = await source.next();
        if (step.done || bill(step.value).reference === reference) return step;
      }
    },
    return: (value?: unknown) => source.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
    throw: (error?: unknown) => source.throw?.(error) ?? Promise.reject(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

const scheduled = (input: {
  isSchedule?: boolean | null;
  scheduleData?: { executionDate: Date; isRecurring?: boolean | null; recurrencePattern?: string | null } | null;
}) => ({
  isSchedule: input.isSchedule ?? null,
  scheduleData: input.scheduleData
    ? { ...input.scheduleData, executionDate: input.scheduleData.executionDate.toISOString() }
    : null,
});

/** The provider's raw answer as JSON text: as an upstream gave it, or this gateway's stored value written out. */
const providerDataOf = (r: BillRecord): string | null => {
  if (r.providerDataText !== undefined) return r.providerDataText;
  return r.providerData === null || r.providerData === undefined ? null : JSON.stringify(r.providerData);
};

/**
 * A part of a record only its stored form has: an upstream's payment answer leaves out updatedAt,
 * deletedDate and providerData (the spec's payment answers do), so they are read from the record by
 * reference, once per request however many of them (or lookups of it) the answer asks for, and
 * only when a caller asks for them.
 */
function whenStored<T>(record: BillRecord, context: GraphQLContext, read: (stored: BillRecord) => T): T | Promise<T> {
  if (record.updatedAt !== undefined) return read(record);
  return recordByReference(context, record.reference).then(read);
}

/** A record by reference: in facade mode asked of the upstream once per request (upstream-reads.ts). */
const recordByReference = (context: GraphQLContext, reference: string) =>
  upstreamRead(context, `billRecord:${reference}`, () =>
    context.services.billsDomain.record(callerOf(context), reference),
  );

export const billResolvers: Resolvers = {
  Query: {
    billCategories: (_root, _args, { principal, services }) => services.bills.categories(principal!),
    billers: (_root, { category }, { principal, services }) => services.bills.billers(principal!, category),
    billerItems: (_root, { billerCode }, { principal, services }) => services.bills.items(principal!, billerCode),
    electricityBillers: (_root, _args, { principal, services }) => services.bills.electricityBillers(principal!),
    discos: (_root, _args, { principal, services }) => services.bills.discos(principal!),
    providerItems: (_root, { provider }, { principal, services }) => services.bills.providerItems(principal!, provider),
    billRecords: (_root, { filter, page, limit }, context) => {
      const given = Object.fromEntries(Object.entries(filter ?? {}).filter(([, v]) => v !== null && v !== undefined));
      return upstreamRead(context, `billRecords:${JSON.stringify([given, page, limit])}`, () =>
        context.services.billsDomain.records(callerOf(context), given, page ?? 1, limit ?? 20),
      );
    },
    billRecord: (_root, { reference }, context) => recordByReference(context, reference),
    billBeneficiaries: (_root, _args, { principal, services }) => services.bills.beneficiaries(principal!),
    billSchedules: (_root, _args, { principal, services }) => services.bills.schedules(principal!),
  },
  Mutation: {
    validateBillCustomer: (_root, { input }, context) =>
      context.services.billsDomain.validate(callerOf(context), input),
    buyAirtime: (_root, { input }, context) =>
      context.services.billsDomain.pay(
        callerOf(context),
        { ...input, ...scheduled(input), type: 'AIRTIME', customer: input.phoneNumber } satisfies BillPaymentInput,
        context.idempotencyKey,
      ),
    buyMobileData: (_root, { input }, context) =>
      context.services.billsDomain.pay(
        callerOf(context),
        { ...input, ...scheduled(input), type: 'MOBILEDATA', customer: input.phoneNumber },
        context.idempotencyKey,
      ),
    subscribeCableTv: (_root, { input }, context) =>
      context.services.billsDomain.pay(
        callerOf(context),
        { ...input, ...scheduled(input), type: 'CABLEBILLS', customer: input.smartcardNumber },
        context.idempotencyKey,
      ),
    payElectricity: (_root, { input }, context) =>
      context.services.billsDomain.pay(
        callerOf(context),
        { ...input, ...scheduled(input), type: 'UTILITYBILLS', customer: input.meterNumber, biller: input.disco },
        context.idempotencyKey,
      ),
    deleteBillBeneficiary: (_root, { id }, { principal, services }) => services.bills.deleteBeneficiary(principal!, id),
    cancelBillSchedule: (_root, { id }, { principal, services }) => services.bills.cancelSchedule(principal!, id),
  },
  Subscription: {
    billUpdates: {
      subscribe: (_root, { reference, after }, { principal, services }) =>
        forReference(services.eventFeed.subscribe(principal!, BILL_EVENT_KINDS, after ?? undefined), reference),
      resolve: (event: unknown) => event as never,
    },
  },
  BillUpdate: {
    eventId: (event) => event.id,
    seq: (event) => event.seq ?? 0,
    reference: (event) => bill(event).reference,
    status: (event) => bill(event).status,
    amount: (event) => bill(event).amount,
    billerName: (event) => bill(event).billerName,
    customerName: (event) => bill(event).customerName ?? null,
    customerId: (event) => bill(event).customerId,
  },
  BillRecord: {
    amount: (r) => nairaNumber(r.amount),
    // Never reached in facade mode: the graph a facade serves has no fee (the spec's record has none).
    fee: (r) => {
      if (r.fee === undefined) throw notInFacade('BillRecord.fee');
      return nairaNumber(r.fee);
    },
    updatedAt: (r, _args, context) => whenStored(r, context, (stored) => stored.updatedAt!),
    deletedDate: (r, _args, context) => whenStored(r, context, (stored) => stored.deletedDate ?? null),
    providerData: (r, _args, context) => whenStored(r, context, providerDataOf),
  },
  BillSchedule: {
    // Stored in kobo (what each run holds); shown in naira like every other amount.
    payment: (schedule) => {
      const payment = schedule.payment as Record<string, unknown>;
      const naira = (kobo: unknown) =>
        typeof kobo === 'string' && /^\d+$/.test(kobo) ? nairaNumber(BigInt(kobo)) : kobo;
      return { ...payment, amount: naira(payment['amount']), fee: naira(payment['fee']) };
    },
  },
  SkippedBillRun: {
    // Kept as ISO text in the schedule's JSON.
    at: (run) => new Date(run.at),
  },
  BillItem: {
    amount: (i) => nairaNumber(i.amount),
    fee: (i) => nairaNumber(i.fee),
  },
  BillValidation: {
    minimum: (v) => nairaNumber(v.minimum),
    maximum: (v) => nairaNumber(v.maximum),
  },
};
