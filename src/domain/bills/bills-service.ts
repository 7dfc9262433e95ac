import { and, asc, desc, eq, gte, ilike, inArray, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import { type Database, type Executor, queryRows } from '../../db/client.js';
import { billBeneficiaries, billRecords, billSchedules } from '../../db/bills-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { type DateBound, dateRange } from '../date-bound.js';
import { badInput, DomainError, notFound } from '../errors.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { isUuid } from '../ids.js';
import { nearEndSlice } from '../offset-page.js';
import { checkPage, paged } from '../pagination.js';
import { ReferenceCache } from '../reference-cache.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { ledger } from '../ledger/ledger.js';
import { koboFrom } from '../wallet/naira.js';
import { transactionStore } from '../wallet/transaction-store.js';
import { openPendingTransaction, recordTransactionEvent } from '../wallet/wallet-events.js';
import { insertOrConflict, referenceFrom } from '../wallet/wallet-service.js';
import { type BillRecordRow, recordBillEvent } from './bill-record.js';
import {
  type Biller,
  type BillItem,
  type BillOutcome,
  type BillsProvider,
  type BillType,
  BILL_TYPES,
} from './bills-provider.js';
import { nextRun, RECURRENCE_PATTERNS, type RecurrencePattern } from './recurrence.js';

export const BILL_JOBS = {
  /** A PENDING bill (provider timeout): ask the provider until it settles. */
  statusPoll: 'bill.status-poll',
  /** A scheduled payment's run. */
  scheduleRun: 'bill.schedule-run',
} as const;

const POLL_AFTER_MS = 2 * 60_000;
const CATALOGUE_TTL_MS = 3600_000;
export const MAX_RECORDS_PAGE = 100;
/** Beyond this many distinct biller names for one owner, a name filter tests every row instead. */
const MAX_BILLER_NAMES_STEPPED = 500;

export interface BillPaymentInput {
  type: BillType;
  /** A biller code (BIL099) or its short name (MTN, IKEDC). */
  biller: string;
  /** The item (bundle, plan); optional where the biller has one item (airtime, electricity). */
  itemCode?: string | null;
  customer: string;
  /** Naira; required unless the item has a fixed price. */
  amount?: unknown;
  reference?: string | null;
  isSchedule?: boolean | null;
  scheduleData?: { executionDate?: unknown; isRecurring?: boolean | null; recurrencePattern?: string | null } | null;
  saveBeneficiary?: boolean | null;
  beneficiaryName?: string | null;
}

/** A payment resolved against the catalogue, ready to run now or at a schedule's time. */
interface ResolvedPayment {
  type: BillType;
  billerCode: string;
  billerName: string;
  itemCode: string;
  customer: string;
  customerName: string | null;
  amount: string;
  fee: string;
  validityPeriod: string | null;
}

export interface RecordFilter {
  type?: BillType | undefined;
  status?: 'PENDING' | 'SUCCESS' | 'FAILED' | undefined;
  billerName?: string | undefined;
  billerCode?: string | undefined;
  customer?: string | undefined;
  startDate?: DateBound | undefined;
  endDate?: DateBound | undefined;
  search?: string | undefined;
  minAmount?: number | undefined;
  maxAmount?: number | undefined;
  sortBy?: 'createdAt' | 'amount' | 'updatedAt' | undefined;
  sortOrder?: 'ASC' | 'DESC' | undefined;
}

/** The reference the provider knows a bill by: unique across users (the caller's is unique per user only). */
export const providerReference = (record: { id: string }) => `pgw-${record.id}`;

const billNotFound = (reference: string) =>
  new DomainError('BILL_NOT_FOUND', `Bill transaction with reference ${JSON.stringify(reference)} was not found.`, {
    reference,
  });
const ownedBy = (owner: { userId: string; environment: Environment }) =>
  and(eq(billRecords.userId, owner.userId), eq(billRecords.environment, owner.environment));

/**
 * Bills: the catalogue, customer validation, payments from the wallet (hold → provider → capture or
 * release), records, receipts, beneficiaries and schedules.
 */
export class BillsService {
  private readonly catalogue = new ReferenceCache(CATALOGUE_TTL_MS);

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly providerFor: (environment: Environment) => BillsProvider,
  ) {}

  categories(principal: Principal) {
    return this.catalogue.get(`${principal.environment}:categories`, () =>
      this.providerFor(principal.environment).categories(),
    );
  }

  billers(principal: Principal, category: BillType): Promise<Biller[]> {
    if (!BILL_TYPES.includes(category)) throw badInput('category', `category must be one of ${BILL_TYPES.join(', ')}.`);
    return this.catalogue.get(`${principal.environment}:billers:${category}`, () =>
      this.providerFor(principal.environment).billers(category),
    );
  }

  items(principal: Principal, billerCode: string): Promise<BillItem[]> {
    return this.catalogue.get(`${principal.environment}:items:${billerCode}`, () =>
      this.providerFor(principal.environment).items(billerCode),
    );
  }

  /** Electricity billers (prepaid and postpaid). */
  electricityBillers(principal: Principal) {
    return this.billers(principal, 'UTILITYBILLS');
  }

  /** The distribution companies: one entry per DISCO, with its prepaid and postpaid billers. */
  async discos(principal: Principal) {
    const billers = await this.electricityBillers(principal);
    const byDisco = new Map<
      string,
      { shortName: string; name: string; prepaid: Biller | null; postpaid: Biller | null }
    >();
    for (const b of billers) {
      const shortName = b.shortName.replace(/-POSTPAID$/, '');
      const entry = byDisco.get(shortName) ?? {
        shortName,
        name: b.name.replace(/ (Prepaid|Postpaid)$/, ''),
        prepaid: null,
        postpaid: null,
      };
      if (b.meterType === 'postpaid') entry.postpaid = b;
      else entry.prepaid = b;
      byDisco.set(shortName, entry);
    }
    return [...byDisco.values()];
  }

  /** A provider's items by its code or short name ("items for a provider"). */
  async providerItems(principal: Principal, provider: string) {
    const biller = await this.resolveBiller(principal, provider, undefined, 'provider');
    return this.items(principal, biller.billerCode);
  }

  async validate(principal: Principal, input: { customer: string; billerCode: string; itemCode: string }) {
    for (const field of ['customer', 'billerCode', 'itemCode'] as const) {
      if (typeof input[field] !== 'string' || !input[field].trim()) throw badInput(field, `${field} is required.`);
    }
    return this.providerFor(principal.environment).validate({
      customer: input.customer.trim(),
      billerCode: input.billerCode.trim(),
      itemCode: input.itemCode.trim(),
    });
  }

  /** Pays a bill now, or schedules it (`isSchedule`). */
  async pay(principal: Principal, input: BillPaymentInput, idempotencyKey: string | undefined): Promise<BillRecordRow> {
    const payment = await this.resolvePayment(principal, input);
    const reference = referenceFrom(input.reference, 'BILL');
    const beneficiaryName = input.beneficiaryName?.trim() || null;
    if (beneficiaryName && beneficiaryName.length > 60)
      throw badInput('beneficiaryName', 'beneficiaryName must be at most 60 characters.');
    if (input.isSchedule) {
      if (!input.scheduleData)
        throw badInput(
          'scheduleData',
          'scheduleData is required when isSchedule is true: { executionDate, isRecurring, recurrencePattern }.',
        );
      const { executionAt, recurrence } = this.checkSchedule(input.scheduleData);
      const scope = { userId: principal.userId, environment: principal.environment, operation: 'bills.schedule' };
      return this.idempotency.run(
        scope,
        idempotencyKey,
        { payment, reference: input.reference ?? null, executionAt, recurrence },
        async (claim) => {
          const record = await this.db.transaction(async (tx) => {
            const [schedule] = await tx
              .insert(billSchedules)
              .values({
                userId: principal.userId,
                environment: principal.environment,
                payment: { ...payment, reference },
                firstRunAt: executionAt,
                recurrence,
                nextRunAt: executionAt,
              })
              .returning();
            const row = await this.insertRecord(tx, principal, payment, reference, schedule!.id, {
              scheduleId: schedule!.id,
              executionDate: executionAt.toISOString(),
              recurrencePattern: recurrence,
            });
            await enqueueJob(tx, {
              kind: BILL_JOBS.scheduleRun,
              payload: { scheduleId: schedule!.id, run: 1 },
              runAt: executionAt,
              tenant: principal.userId,
            });
            if (input.saveBeneficiary) await this.saveBeneficiary(tx, principal, payment, beneficiaryName);
            await this.idempotency.finish(tx, claim, row);
            return row;
          });
          return record;
        },
      );
    }
    if (input.scheduleData) throw badInput('isSchedule', 'scheduleData was given without isSchedule: true.');
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'bills.pay' };
    return this.idempotency.run(
      scope,
      idempotencyKey,
      { payment, reference: input.reference ?? null },
      async (claim) => {
        if (claim?.resourceId) return this.byId(claim.resourceId);
        const record = await this.db.transaction(async (tx) => {
          const row = await this.insertRecord(tx, principal, payment, reference, null, null);
          await this.holdFor(tx, row);
          if (input.saveBeneficiary) await this.saveBeneficiary(tx, principal, payment, beneficiaryName);
          await this.idempotency.attach(tx, claim, row.id);
          return row;
        });
        const settled = await this.execute(record.id);
        await this.db.transaction((tx) => this.idempotency.finish(tx, claim, settled));
        return settled;
      },
    );
  }

  /** Sends a held, recorded bill to the provider and settles it with the answer. */
  async execute(recordId: string): Promise<BillRecordRow> {
    const record = await this.byId(recordId);
    if (record.status !== 'PENDING' || record.txRef) return record;
    let outcome: BillOutcome;
    try {
      outcome = await this.providerFor(record.environment).pay({
        billerCode: record.billerCode,
        itemCode: record.itemCode,
        customer: record.customer,
        amount: record.amount,
        reference: providerReference(record),
      });
    } catch (error) {
      outcome =
        error instanceof DomainError && error.status < 500
          ? { status: 'FAILED', txRef: null, reason: error.message, providerData: {} }
          : {
              status: 'PENDING',
              txRef: null,
              providerData: { error: 'The provider did not answer clearly; the status is polled.' },
            };
    }
    return this.settle(recordId, outcome);
  }

  /**
   * Applies a provider outcome once: SUCCESS captures the hold (the fee to the fees account),
   * FAILED releases it exactly, PENDING leaves both for the status poll or the webhook.
   */
  async settle(recordId: string, outcome: BillOutcome): Promise<BillRecordRow> {
    return this.db.transaction(async (tx) => {
      const [current] = await tx.select().from(billRecords).where(eq(billRecords.id, recordId)).for('update');
      if (!current) throw notFound('Bill record');
      if (current.status !== 'PENDING') return current;
      const now = this.clock.now();
      if (outcome.status === 'PENDING') {
        const [row] = await tx
          .update(billRecords)
          .set({ providerData: outcome.providerData, updatedAt: now })
          .where(eq(billRecords.id, recordId))
          .returning();
        return row!;
      }
      const success = outcome.status === 'SUCCESS';
      if (current.holdId) {
        if (success) await ledger.capture(tx, current.holdId, current.fee, now);
        else await ledger.release(tx, current.holdId, now);
      }
      const [row] = await tx
        .update(billRecords)
        .set({
          status: outcome.status,
          txRef: outcome.txRef ?? current.txRef,
          providerData: outcome.providerData,
          token: success ? (outcome.token ?? null) : null,
          units: success ? (outcome.units ?? null) : null,
          failureReason: success ? null : outcome.reason,
          version: current.version + 1,
          updatedAt: now,
        })
        .where(eq(billRecords.id, recordId))
        .returning();
      const transaction = await transactionStore.findByReference(tx, current, current.reference);
      const settled = transaction
        ? await transactionStore.settle(tx, transaction.id, success ? 'COMPLETED' : 'FAILED', now)
        : undefined;
      await recordBillEvent(tx, row!, now);
      if (settled) await recordTransactionEvent(tx, settled, now);
      return row!;
    });
  }

  /**
   * For the status-poll job and the provider's webhook: asks the provider about a PENDING bill.
   * One the provider never received (the process died between the hold and the call) is sent now;
   * the provider reference makes a second send the same payment.
   */
  async poll(recordId: string): Promise<BillRecordRow> {
    const record = await this.byId(recordId);
    if (record.status !== 'PENDING' || !record.holdId) return record;
    const answer = await this.providerFor(record.environment).status(providerReference(record));
    if (answer.status === 'NOT_FOUND') return this.execute(record.id);
    return this.settle(record.id, answer);
  }

  /** A bill by what the provider calls it: our `pgw-<id>` reference, or its own tx_ref. */
  async byProviderReference(provider: string, ref: string): Promise<BillRecordRow | undefined> {
    const id = /^pgw-([0-9a-f-]{36})$/.exec(ref)?.[1];
    const [row] = await this.db
      .select()
      .from(billRecords)
      .where(and(eq(billRecords.provider, provider), id ? eq(billRecords.id, id) : eq(billRecords.txRef, ref)))
      .limit(1);
    return row;
  }

  /** Runs one occurrence of a schedule: its bill is held and paid now; a recurring one is rescheduled. */
  async runSchedule(scheduleId: string, run: number): Promise<BillRecordRow | undefined> {
    const prepared = await this.db.transaction(async (tx) => {
      const [schedule] = await tx.select().from(billSchedules).where(eq(billSchedules.id, scheduleId)).for('update');
      if (schedule?.status !== 'active' || schedule.runCount >= run) return undefined;
      const now = this.clock.now();
      const payment = schedule.payment as ResolvedPayment & { reference: string };
      const owner = { userId: schedule.userId, environment: schedule.environment };
      const reference = run === 1 ? payment.reference : `${payment.reference}-R${run}`;
      let [record] = await tx
        .select()
        .from(billRecords)
        .where(and(ownedBy(owner), eq(billRecords.reference, reference)));
      record ??= await this.insertRecord(tx, owner, payment, reference, schedule.id, { scheduleId: schedule.id, run });
      const next = schedule.recurrence
        ? nextRun(schedule.firstRunAt, schedule.nextRunAt ?? now, schedule.recurrence as RecurrencePattern)
        : null;
      await tx
        .update(billSchedules)
        .set({ runCount: run, nextRunAt: next, status: next ? 'active' : 'completed', updatedAt: now })
        .where(eq(billSchedules.id, schedule.id));
      if (next)
        await enqueueJob(tx, {
          kind: BILL_JOBS.scheduleRun,
          payload: { scheduleId: schedule.id, run: run + 1 },
          runAt: next,
          tenant: schedule.userId,
        });
      return record;
    });
    if (!prepared) return undefined;
    // The money is held when the run happens; too little balance is a FAILED bill with its event.
    try {
      await this.db.transaction((tx) => this.holdFor(tx, prepared));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'INSUFFICIENT_FUNDS') {
        return this.settle(prepared.id, {
          status: 'FAILED',
          txRef: null,
          reason: 'Insufficient wallet balance when the scheduled payment ran.',
          providerData: {},
        });
      }
      throw error;
    }
    return this.execute(prepared.id);
  }

  async schedules(principal: Principal) {
    return this.db
      .select()
      .from(billSchedules)
      .where(and(eq(billSchedules.userId, principal.userId), eq(billSchedules.environment, principal.environment)))
      .orderBy(desc(billSchedules.createdAt));
  }

  async cancelSchedule(principal: Principal, id: string) {
    const [row] = isUuid(id)
      ? await this.db
          .update(billSchedules)
          .set({ status: 'cancelled', nextRunAt: null, updatedAt: this.clock.now() })
          .where(
            and(
              eq(billSchedules.id, id),
              eq(billSchedules.userId, principal.userId),
              eq(billSchedules.environment, principal.environment),
              eq(billSchedules.status, 'active'),
            ),
          )
          .returning()
      : [];
    if (row) return row;
    const existing = (await this.schedules(principal)).find((s) => s.id === id);
    if (!existing) throw notFound('Bill schedule');
    throw new DomainError('CONFLICT', `The schedule is already ${existing.status}.`);
  }

  async beneficiaries(principal: Principal) {
    return this.db
      .select()
      .from(billBeneficiaries)
      .where(
        and(eq(billBeneficiaries.userId, principal.userId), eq(billBeneficiaries.environment, principal.environment)),
      )
      .orderBy(asc(billBeneficiaries.createdAt));
  }

  async deleteBeneficiary(principal: Principal, id: string) {
    const [row] = isUuid(id)
      ? await this.db
          .delete(billBeneficiaries)
          .where(
            and(
              eq(billBeneficiaries.id, id),
              eq(billBeneficiaries.userId, principal.userId),
              eq(billBeneficiaries.environment, principal.environment),
            ),
          )
          .returning()
      : [];
    if (!row) throw notFound('Beneficiary');
    return row;
  }

  async record(principal: Principal, reference: string): Promise<BillRecordRow> {
    const [row] = await this.db
      .select()
      .from(billRecords)
      .where(and(ownedBy(principal), eq(billRecords.reference, reference)));
    if (!row) throw billNotFound(reference);
    return row;
  }

  async records(principal: Principal, filter: RecordFilter, page = 1, limit = 20) {
    checkPage(page, limit, MAX_RECORDS_PAGE);
    const created = dateRange(filter.startDate, filter.endDate, { from: 'startDate', to: 'endDate' });
    const minAmount = filter.minAmount === undefined ? undefined : koboFrom(filter.minAmount, 'minAmount');
    const maxAmount = filter.maxAmount === undefined ? undefined : koboFrom(filter.maxAmount, 'maxAmount');
    if (minAmount !== undefined && maxAmount !== undefined && minAmount > maxAmount)
      throw badInput('maxAmount', 'maxAmount must not be below minAmount.');
    const like = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // A partial biller name matches among the owner's few distinct names first, so the list and its
    // total are ranges of the (owner, biller_name, …) index instead of a pattern test on every row.
    const billerNames = filter.billerName ? await this.billerNamesLike(principal, like(filter.billerName)) : undefined;
    if (billerNames?.length === 0) return paged('bills', [], 0, page, limit);
    const conditions: Array<SQL | undefined> = [
      ownedBy(principal),
      filter.type ? eq(billRecords.type, filter.type) : undefined,
      filter.status ? eq(billRecords.status, filter.status) : undefined,
      billerNames === 'scan'
        ? ilike(billRecords.billerName, like(filter.billerName!))
        : billerNames
          ? inArray(billRecords.billerName, billerNames)
          : undefined,
      filter.billerCode ? eq(billRecords.billerCode, filter.billerCode) : undefined,
      filter.customer ? eq(billRecords.customer, filter.customer) : undefined,
      created.from ? gte(billRecords.createdAt, created.from) : undefined,
      // A date endDate is inclusive: everything before the next Lagos midnight.
      created.to ? lt(billRecords.createdAt, created.to) : undefined,
      filter.search
        ? or(ilike(billRecords.reference, like(filter.search)), ilike(billRecords.txRef, like(filter.search)))
        : undefined,
      minAmount !== undefined ? gte(billRecords.amount, minAmount) : undefined,
      maxAmount !== undefined ? lte(billRecords.amount, maxAmount) : undefined,
    ];
    const where = and(...conditions);
    const column = { createdAt: billRecords.createdAt, amount: billRecords.amount, updatedAt: billRecords.updatedAt }[
      filter.sortBy ?? 'createdAt'
    ];
    const ascending = filter.sortOrder === 'ASC';
    const [count] = await this.db.select({ n: sql<number>`count(*)::int` }).from(billRecords).where(where);
    const total = Number(count?.n ?? 0);
    const slice = nearEndSlice(total, page, limit);
    if (!slice) return paged('bills', [], total, page, limit);
    const read = ascending !== slice.reversed ? asc : desc;
    const ids = this.db
      .select({ id: billRecords.id })
      .from(billRecords)
      .where(where)
      .orderBy(read(column), read(billRecords.id))
      .limit(slice.limit)
      .offset(slice.offset);
    const order = ascending ? asc : desc;
    const rows = await this.db
      .select()
      .from(billRecords)
      .where(inArray(billRecords.id, ids))
      .orderBy(order(column), order(billRecords.id));
    return paged('bills', rows, total, page, limit);
  }

  /**
   * The owner's distinct biller names matching `pattern` (ILIKE), found by stepping through the
   * (owner, biller_name) index one name at a time; 'scan' when the owner has more names than is
   * worth stepping through, so the caller tests the pattern on every row instead.
   */
  private async billerNamesLike(principal: Principal, pattern: string): Promise<string[] | 'scan'> {
    const owner = sql`user_id = ${principal.userId} and environment = ${principal.environment}`;
    // Rows past the step limit are kept whatever their name, to tell "too many names" apart.
    const rows = await queryRows<{ name: string; step: number }>(
      this.db,
      sql`/* billerNamesLike */ with recursive names(name, step) as (
        (select biller_name, 1 from bill_records where ${owner} order by biller_name limit 1)
        union all
        select (select biller_name from bill_records where ${owner} and biller_name > names.name
                 order by biller_name limit 1), step + 1
          from names where names.name is not null and step <= ${MAX_BILLER_NAMES_STEPPED}
      )
      select name, step from names
       where name is not null and (name ilike ${pattern} or step > ${MAX_BILLER_NAMES_STEPPED})`,
    );
    if (rows.some((r) => Number(r.step) > MAX_BILLER_NAMES_STEPPED)) return 'scan';
    return rows.map((r) => r.name);
  }

  async byId(id: string): Promise<BillRecordRow> {
    const [row] = await this.db.select().from(billRecords).where(eq(billRecords.id, id));
    if (!row) throw notFound('Bill record');
    return row;
  }

  private async insertRecord(
    tx: Executor,
    owner: { userId: string; environment: Environment },
    payment: ResolvedPayment,
    reference: string,
    scheduleId: string | null,
    metadata: Record<string, unknown> | null,
  ): Promise<BillRecordRow> {
    const now = this.clock.now();
    return insertOrConflict(reference, async () => {
      const [row] = await tx
        .insert(billRecords)
        .values({
          userId: owner.userId,
          environment: owner.environment,
          reference,
          billerCode: payment.billerCode,
          itemCode: payment.itemCode,
          customer: payment.customer,
          amount: BigInt(payment.amount),
          fee: BigInt(payment.fee),
          type: payment.type,
          billerName: payment.billerName,
          customerName: payment.customerName,
          validityPeriod: payment.validityPeriod,
          metadata: metadata ? JSON.stringify(metadata) : null,
          provider: this.providerFor(owner.environment).name,
          scheduleId,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      return row!;
    });
  }

  /** Holds amount + fee and records the BILL wallet transaction, once per record. */
  private async holdFor(tx: Executor, record: BillRecordRow): Promise<void> {
    const [locked] = await tx.select().from(billRecords).where(eq(billRecords.id, record.id)).for('update');
    if (!locked || locked.holdId || locked.status !== 'PENDING') return;
    const now = this.clock.now();
    const holdId = await ledger.hold(tx, record, record.amount + record.fee, record.reference);
    await tx.update(billRecords).set({ holdId, updatedAt: now }).where(eq(billRecords.id, record.id));
    await openPendingTransaction(
      tx,
      record,
      {
        type: 'BILL',
        amount: record.amount,
        fee: record.fee,
        reference: record.reference,
        description: `${record.billerName} for ${record.customer}`,
        counterparty: { billerCode: record.billerCode, billerName: record.billerName, customer: record.customer },
      },
      now,
    );
    await enqueueJob(tx, {
      kind: BILL_JOBS.statusPoll,
      payload: { recordId: record.id },
      runAt: new Date(now.getTime() + POLL_AFTER_MS),
      tenant: record.userId,
    });
  }

  private async saveBeneficiary(
    tx: Executor,
    principal: Principal,
    payment: ResolvedPayment,
    name: string | null,
  ): Promise<void> {
    await tx
      .insert(billBeneficiaries)
      .values({
        userId: principal.userId,
        environment: principal.environment,
        name: name ?? payment.customerName ?? payment.customer,
        type: payment.type,
        billerCode: payment.billerCode,
        billerName: payment.billerName,
        customer: payment.customer,
      })
      .onConflictDoUpdate({
        target: [
          billBeneficiaries.userId,
          billBeneficiaries.environment,
          billBeneficiaries.billerCode,
          billBeneficiaries.customer,
        ],
        set: { name: name ?? payment.customerName ?? payment.customer },
      });
  }

  private async resolveBiller(
    principal: Principal,
    given: string,
    type: BillType | undefined,
    field: string,
  ): Promise<Biller> {
    const wanted = given.trim().toUpperCase();
    if (!wanted) throw badInput(field, `${field} is required: a biller code or short name.`);
    const categories = type ? [type] : [...BILL_TYPES];
    for (const category of categories) {
      const found = (await this.billers(principal, category)).find(
        (b) => b.billerCode.toUpperCase() === wanted || b.shortName.toUpperCase() === wanted,
      );
      if (found) return found;
    }
    throw badInput(
      field,
      `${field} ${JSON.stringify(given)} is not a known ${type ? `${type} ` : ''}biller; list them with the billers.`,
    );
  }

  private async resolvePayment(principal: Principal, input: BillPaymentInput): Promise<ResolvedPayment> {
    const field = input.type === 'UTILITYBILLS' ? 'disco' : 'biller';
    const customerField = {
      AIRTIME: 'phoneNumber',
      MOBILEDATA: 'phoneNumber',
      CABLEBILLS: 'smartcardNumber',
      UTILITYBILLS: 'meterNumber',
    }[input.type];
    const customer = typeof input.customer === 'string' ? input.customer.trim() : '';
    if (!customer) throw badInput(customerField, `${customerField} is required.`);
    if ((input.type === 'AIRTIME' || input.type === 'MOBILEDATA') && !/^(\+?234|0)[789]\d{9}$/.test(customer)) {
      throw badInput(customerField, `${customerField} must be a Nigerian mobile number such as 08031234567.`);
    }
    if (input.type === 'UTILITYBILLS' && !/^\d{6,13}$/.test(customer))
      throw badInput(customerField, `${customerField} must be 6 to 13 digits.`);
    if (input.type === 'CABLEBILLS' && !/^\d{8,12}$/.test(customer))
      throw badInput(customerField, `${customerField} must be 8 to 12 digits.`);
    const biller = await this.resolveBiller(principal, input.biller ?? '', input.type, field);
    const items = await this.items(principal, biller.billerCode);
    const item = input.itemCode
      ? items.find((i) => i.itemCode === input.itemCode)
      : items.length === 1
        ? items[0]
        : undefined;
    if (!item) {
      throw badInput(
        'itemCode',
        input.itemCode
          ? `itemCode ${JSON.stringify(input.itemCode)} is not an item of ${biller.name}.`
          : `itemCode is required for ${biller.name}: ${items.map((i) => i.itemCode).join(', ')}.`,
      );
    }
    let amount: bigint;
    if (item.amount > 0n) {
      if (input.amount !== undefined && input.amount !== null && koboFrom(input.amount) !== item.amount) {
        throw badInput('amount', `amount must be ${Number(item.amount) / 100} for ${item.name} (or omitted).`);
      }
      amount = item.amount;
    } else {
      if (input.amount === undefined || input.amount === null) throw badInput('amount', 'amount is required.');
      amount = koboFrom(input.amount);
    }
    // Electricity and cable customers are checked with the biller first: the name goes on the record.
    let customerName: string | null = null;
    if (input.type === 'UTILITYBILLS' || input.type === 'CABLEBILLS') {
      const validation = await this.providerFor(principal.environment).validate({
        itemCode: item.itemCode,
        billerCode: biller.billerCode,
        customer,
      });
      if (amount < validation.minimum || amount > validation.maximum) {
        throw badInput(
          'amount',
          `amount must be between ${Number(validation.minimum) / 100} and ${Number(validation.maximum) / 100} for this biller.`,
        );
      }
      customerName = validation.customerName;
    } else if (amount < 5_000n) {
      throw badInput('amount', 'amount must be at least 50 naira.');
    }
    return {
      type: input.type,
      billerCode: biller.billerCode,
      billerName: biller.name,
      itemCode: item.itemCode,
      customer,
      customerName,
      amount: amount.toString(),
      fee: item.fee.toString(),
      validityPeriod: item.validityPeriod,
    };
  }

  private checkSchedule(data: NonNullable<BillPaymentInput['scheduleData']>): {
    executionAt: Date;
    recurrence: RecurrencePattern | null;
  } {
    const executionAt = typeof data.executionDate === 'string' ? new Date(data.executionDate) : undefined;
    if (!executionAt || Number.isNaN(executionAt.getTime()))
      throw badInput('scheduleData.executionDate', 'scheduleData.executionDate must be an ISO 8601 date-time.');
    if (executionAt.getTime() <= this.clock.now().getTime())
      throw badInput('scheduleData.executionDate', 'scheduleData.executionDate must be in the future.');
    if (!data.isRecurring) {
      if (data.recurrencePattern)
        throw badInput('scheduleData.recurrencePattern', 'scheduleData.recurrencePattern needs isRecurring: true.');
      return { executionAt, recurrence: null };
    }
    const pattern = (data.recurrencePattern ?? '').toLowerCase();
    if (!RECURRENCE_PATTERNS.includes(pattern as RecurrencePattern)) {
      throw badInput(
        'scheduleData.recurrencePattern',
        `scheduleData.recurrencePattern must be one of ${RECURRENCE_PATTERNS.join(', ')}.`,
      );
    }
    return { executionAt, recurrence: pattern as RecurrencePattern };
  }
}
