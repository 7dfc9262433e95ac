import { randomUUID } from 'node:crypto';
import type { Database, Executor } from '../../db/client.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { type Clock, type ClockFor, type ClockOwner, clockLookup } from '../clock.js';
import { type DateBound, dateRange } from '../date-bound.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { checkFieldsAwaiting, optionalText } from '../field-checks.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { isUuid } from '../ids.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { BILL, BILL_HELD, BILL_STATUS_POLL_JOB } from './bill-lifecycle.js';
import { billTransaction, pendingBillRow } from './bill-rows.js';
import { transition } from '../lifecycle/transition.js';
import { HeldOperation, type KeyedOpen } from '../money/held-operation.js';
import type { KeyRef } from '../money/key-claim.js';
import { REFERENCE_CONSTRAINT, violatedConstraint } from '../money/plain-write.js';
import { BILL_REFERENCE_CONSTRAINT, billOpenStatement } from './bill-writes.js';
import { checkPage, paged } from '../pagination.js';
import { type Bulkheads, UNBOUNDED_BULKHEADS } from '../upstream/bulkhead.js';
import { koboFrom, optionalKoboFrom } from '../wallet/naira.js';
import { openPendingTransaction } from '../wallet/wallet-events.js';
import { transactionStore } from '../wallet/transaction-store.js';
import { HELD_WALLET } from '../wallet/held-wallet.js';
import { insertOrConflict, referenceFrom } from '../money/reference.js';

import { BillCatalogue, type BillPaymentInput, billCustomer, type ResolvedPayment } from './bill-catalogue.js';
import { type BillRecordRow, SKIPPED_RUNS_KEPT, type SkippedBillRun } from './bill-record.js';
import { billNotFound } from './bill-not-found.js';
import { billStore } from './bill-store.js';
import {
  type BillOutcome,
  type BillsProvider,
  type BillType,
  payBillThrough,
  providerReference,
} from './bills-provider.js';
import { nextRun, RECURRENCE_PATTERNS, type RecurrencePattern } from './recurrence.js';

export type { BillPaymentInput } from './bill-catalogue.js';

export const BILL_JOBS = {
  /** A PENDING bill (provider timeout): ask the provider until it settles. */
  statusPoll: BILL_STATUS_POLL_JOB,
  /** A scheduled payment's run. */
  scheduleRun: 'bill.schedule-run',
} as const;

const POLL_AFTER_MS = 2 * 60_000;
/** The unique indexes whose refusal of a bill means its reference is taken: the bill's and its wallet transaction's. */
const REFERENCES = [REFERENCE_CONSTRAINT, BILL_REFERENCE_CONSTRAINT] as const;

export const MAX_RECORDS_PAGE = 100;

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

type Owner = { userId: string; environment: Environment };

/**
 * Bill payments from the wallet (lifecycle BILL): one commit claims the key, holds amount + fee and
 * records the bill; the provider is called outside any transaction; one commit settles (capture or
 * release) and answers the key. Also records, schedules and beneficiaries; the catalogue is
 * BillCatalogue's.
 */
export class BillsService {
  readonly catalogue: BillCatalogue;
  private readonly clockFor: ClockFor;
  /** The two commits around the provider call (money/held-operation.ts). */
  readonly held: HeldOperation<BillRecordRow, BillOutcome>;

  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    private readonly idempotency: Idempotency,
    private readonly providerFor: (environment: Environment) => BillsProvider,
    /** Each provider's limit on calls in flight (upstream/bulkhead.ts), shared with the process's other calls to it. */
    private readonly bulkheads: Bulkheads = UNBOUNDED_BULKHEADS,
  ) {
    this.clockFor = clockLookup(clock);
    this.catalogue = new BillCatalogue(providerFor);
    this.held = new HeldOperation(db, idempotency, this.clockFor, BILL_HELD, HELD_WALLET);
  }

  categories = (principal: Principal) => this.catalogue.categories(principal);
  billers = (principal: Principal, category: BillType) => this.catalogue.billers(principal, category);
  items = (principal: Principal, billerCode: string) => this.catalogue.items(principal, billerCode);
  electricityBillers = (principal: Principal) => this.catalogue.electricityBillers(principal);
  discos = (principal: Principal) => this.catalogue.discos(principal);
  providerItems = (principal: Principal, provider: string) => this.catalogue.providerItems(principal, provider);
  validate = (principal: Principal, input: { customer: string; billerCode: string; itemCode: string }) =>
    this.catalogue.validate(principal, input);

  /** Pays a bill now, or schedules it (`isSchedule`). */
  async pay(principal: Principal, input: BillPaymentInput, idempotencyKey: string | undefined): Promise<BillRecordRow> {
    const { payment, reference, beneficiaryName } = await checkFieldsAwaiting({
      payment: () => this.catalogue.resolvePayment(principal, input),
      reference: () => referenceFrom(input.reference, 'BILL'),
      beneficiaryName: () => optionalText(input.beneficiaryName, 'beneficiaryName', 60),
    });
    const beneficiary = input.saveBeneficiary ? { name: beneficiaryName } : undefined;
    if (input.isSchedule) return this.schedule(principal, input, payment, reference, beneficiary, idempotencyKey);
    if (input.scheduleData) throw badInput('isSchedule', 'scheduleData was given without isSchedule: true.');
    const now = this.held.now(principal);
    const keyed = {
      scope: { userId: principal.userId, environment: principal.environment, operation: 'bills.pay' },
      key: idempotencyKey,
      input: { payment, reference: input.reference ?? null },
    };
    // The held operation runs both commits and the provider call between them (money/held-operation.ts).
    return this.held.run({
      ...this.opening(principal, payment, reference, now, keyed, beneficiary),
      // A place in the provider's bulkhead before anything is written: refused, 503 BUSY with
      // nothing held, recorded or claimed; given back as soon as the provider has answered.
      bulkhead: this.bulkheadOf(principal),
      send: payBillThrough(this.providerFor(principal.environment)),
      // A key a dead or failed request left running: its record is asked about, and finished
      // (poll takes a place of its own; the held operation gives this one back first).
      resume: (record, key) => this.poll(record.id, key),
    });
  }

  /**
   * A payment's first commit as the held operation is given it: its steps, and its one statement
   * (bill-writes.ts) unless a beneficiary is saved with it. Both write the rows of bill-rows.ts.
   */
  private opening(
    principal: Principal,
    payment: ResolvedPayment,
    reference: string,
    now: Date,
    keyed: KeyedOpen<BillRecordRow>['keyed'],
    beneficiary: { name: string | null } | undefined,
  ): KeyedOpen<BillRecordRow> {
    return {
      owner: principal,
      reference,
      keyed,
      referenceConstraints: REFERENCES,
      steps: (tx) => this.openSteps(tx, principal, payment, reference, now, beneficiary?.name),
      statement: beneficiary
        ? undefined
        : billOpenStatement(this.db, {
            owner: principal,
            payment,
            reference,
            provider: this.providerFor(principal.environment).name,
            now,
            // On the account's clock, as the steps' enqueueJob writes it.
            pollAt: new Date(now.getTime() + POLL_AFTER_MS),
            clock: this.clockFor(principal),
          }),
    };
  }

  /** The first commit as separate statements (with a beneficiary to save, or resuming a key): the hold, the record, its transaction. */
  private async openSteps(
    tx: Executor,
    principal: Principal,
    payment: ResolvedPayment,
    reference: string,
    now: Date,
    beneficiaryName: string | null | undefined,
  ): Promise<BillRecordRow> {
    const transactionId = randomUUID();
    const amount = BigInt(payment.amount) + BigInt(payment.fee);
    const holdId = await this.held.hold(tx, principal, amount, reference, transactionId);
    const row = await this.insertRecord(tx, principal, payment, reference, now, { holdId });
    await this.openHeld(tx, row, transactionId, now);
    if (beneficiaryName !== undefined) await this.saveBeneficiary(tx, principal, payment, beneficiaryName);
    return row;
  }

  /**
   * Sends a held, recorded bill to the provider and settles it with the answer (and answers the
   * key); `answered` is told as soon as the provider has answered, before the settle.
   */
  async execute(record: BillRecordRow, key: KeyRef | null = null, answered?: () => void): Promise<BillRecordRow> {
    let outcome: BillOutcome;
    try {
      outcome = await this.send(record);
    } finally {
      answered?.();
    }
    return this.held.settle(record, outcome, key);
  }

  /** The bulkhead of the provider an owner's bills are paid through (upstream/bulkhead.ts). */
  private bulkheadOf(owner: { environment: Environment }) {
    return this.bulkheads.of(this.providerFor(owner.environment).name);
  }

  /** The provider's answer to a payment (bills-provider.ts `payBillThrough`). */
  private send(record: BillRecordRow): Promise<BillOutcome> {
    return payBillThrough(this.providerFor(record.environment))(record);
  }

  /**
   * Applies a provider outcome once, in a transaction (BILL_HELD says what it does): SUCCESS
   * captures the hold (the fee to the fees account), FAILED releases it exactly, PENDING keeps the
   * provider's latest word for the poll or webhook.
   */
  settle(recordId: string, outcome: BillOutcome, key: KeyRef | null = null): Promise<BillRecordRow> {
    return this.held.settleBySteps(recordId, outcome, key);
  }

  /**
   * For the status-poll job, the provider's webhook and a retry taking over a key a failed request
   * left (`key`, answered with the outcome): asks the provider about a PENDING bill. One the
   * provider never received (the process died between the hold and the call) is sent now; the
   * provider reference makes a second send the same payment.
   */
  async poll(recordId: string, key: KeyRef | null = null): Promise<BillRecordRow> {
    const record = await this.byId(recordId);
    if (record.status !== 'PENDING' || !record.holdId) return this.held.answerAsItStands(key, record);
    // In the provider's bulkhead like a request's call (a refusal fails this run; the job retries).
    const answered = await this.bulkheadOf(record).run(async () => {
      const known = await this.providerFor(record.environment).status(providerReference(record));
      // Never received (the process died between the hold and the call): sent now.
      if (known.status === 'NOT_FOUND' && !record.txRef)
        return { sent: true, outcome: await this.send(record) } as const;
      return { sent: false, known } as const;
    });
    if (answered.sent) return this.held.settle(record, answered.outcome, key);
    if (answered.known.status === 'NOT_FOUND') return this.held.answerAsItStands(key, record);
    return this.settle(record.id, answered.known, key);
  }

  /** A bill by what the provider calls it: our `pgw-<id>` reference, or its own tx_ref. */
  async byProviderReference(provider: string, ref: string): Promise<BillRecordRow | undefined> {
    const id = /^pgw-([0-9a-f-]{36})$/.exec(ref)?.[1];
    return billStore.findByProviderReference(this.db, provider, id ? { id } : { txRef: ref });
  }

  /** The clock of the account a bill or schedule belongs to (its test clock in the sandbox, when attached). */
  clockOf(account: ClockOwner): Clock {
    return this.clockFor(account);
  }

  /** Runs one occurrence of a schedule: its bill is held and paid now; a recurring one is rescheduled. */
  async runSchedule(scheduleId: string, run: number): Promise<BillRecordRow | undefined> {
    const prepared = await this.db.transaction(async (tx) => {
      const schedule = await billStore.lockSchedule(tx, scheduleId);
      if (!schedule) return undefined;
      const clock = this.clockFor(schedule);
      const now = clock.now();
      const payment = schedule.payment as ResolvedPayment & { reference: string };
      const owner = { userId: schedule.userId, environment: schedule.environment };
      const reference = run === 1 ? payment.reference : `${payment.reference}-R${run}`;
      const existing = await billStore.findByReference(tx, owner, reference);
      // Only this schedule's record of the run: a bill of the owner's own, or another schedule's,
      // that holds the reference is never taken over.
      const own = existing?.scheduleId === schedule.id ? existing : undefined;
      // A run already counted, by an attempt that failed after this transaction: its record is
      // taken up again while it has no hold (its hold failed) and the schedule was not cancelled.
      // A held one is left to its status-poll job, which asks the provider before any resend.
      if (schedule.runCount >= run)
        return own?.status === 'PENDING' && !own.holdId && schedule.status !== 'cancelled' ? own : undefined;
      if (schedule.status !== 'active') return undefined;
      // The reference is another bill's: the run is counted (the schedule goes on) but skipped,
      // and kept on the schedule with the reason, so the owner can see why nothing was paid.
      const record = existing
        ? own
        : await this.insertRecord(tx, owner, payment, reference, now, {
            scheduleId: schedule.id,
            metadata: { scheduleId: schedule.id, run },
          });
      const skipped: SkippedBillRun[] =
        existing && !own
          ? [
              ...schedule.skippedRuns,
              {
                run,
                reference,
                reason: `The reference ${JSON.stringify(reference)} is already held by bill ${existing.id}.`,
                at: now.toISOString(),
              },
            ].slice(-SKIPPED_RUNS_KEPT)
          : schedule.skippedRuns;
      const next = schedule.recurrence
        ? nextRun(schedule.firstRunAt, schedule.nextRunAt ?? now, schedule.recurrence as RecurrencePattern)
        : null;
      await billStore.updateSchedule(tx, schedule.id, {
        runCount: run,
        skippedRuns: skipped,
        nextRunAt: next,
        status: next ? 'active' : 'completed',
        updatedAt: now,
      });
      if (next)
        await enqueueJob(tx, {
          kind: BILL_JOBS.scheduleRun,
          payload: { scheduleId: schedule.id, run: run + 1 },
          runAt: next,
          tenant: schedule.userId,
          clock,
        });
      return record;
    });
    if (!prepared) return undefined;
    // A place in the provider's bulkhead before the hold, as a request's: refused (BUSY), this run
    // fails holding nothing, and the job's retry takes the unheld record up again (above).
    const leave = await this.bulkheadOf(prepared).enter();
    try {
      // The money is held when the run happens; too little balance is a FAILED bill with its event.
      let held: BillRecordRow | undefined;
      try {
        held = await this.db.transaction((tx) => this.holdScheduled(tx, prepared.id));
      } catch (error) {
        const reason = await this.refusedRunReason(prepared, error);
        if (!reason) throw error;
        // FAILED without a hold: no money moved, no wallet transaction of its own to settle.
        return await this.settle(prepared.id, { status: 'FAILED', txRef: null, reason, providerData: {} });
      }
      // Held by an earlier attempt: its status-poll job asks the provider first, so a payment it
      // already received is never sent twice.
      if (!held) return await this.byId(prepared.id);
      // Held here: the provider is called now, and the place given back once it has answered.
      return await this.execute(held, null, leave);
    } finally {
      leave();
    }
  }

  /**
   * Why a scheduled run's hold was refused, when the refusal is the run's outcome (the bill FAILED)
   * rather than a fault to retry: too little balance, or its reference taken meanwhile by another
   * operation's wallet transaction (a transfer made with it after the schedule was created).
   */
  private async refusedRunReason(record: BillRecordRow, error: unknown): Promise<string | undefined> {
    if (error instanceof DomainError && error.code === 'INSUFFICIENT_FUNDS')
      return 'Insufficient wallet balance when the scheduled payment ran.';
    if (violatedConstraint(error) !== REFERENCE_CONSTRAINT) return undefined;
    const holder = await transactionStore.findByReference(this.db, record, record.reference);
    return `The reference ${JSON.stringify(record.reference)} was taken by ${holder ? `transaction ${holder.id}` : 'another transaction'} before the scheduled payment ran.`;
  }

  /** Holds a scheduled bill's amount + fee once (its record was written when the run began); undefined if done already. */
  private async holdScheduled(tx: Executor, recordId: string): Promise<BillRecordRow | undefined> {
    const locked = await billStore.lock(tx, recordId);
    if (!locked || locked.holdId || locked.status !== 'PENDING') return undefined;
    const now = this.held.now(locked);
    const transactionId = randomUUID();
    const holdId = await this.held.hold(tx, locked, locked.amount + locked.fee, locked.reference, transactionId);
    const row = await billStore.update(tx, recordId, { holdId, updatedAt: now });
    await this.openHeld(tx, row, transactionId, now);
    return row;
  }

  async schedules(principal: Principal) {
    return billStore.schedules(this.db, principal);
  }

  async cancelSchedule(principal: Principal, id: string) {
    const row = isUuid(id)
      ? await billStore.cancelSchedule(this.db, principal, id, this.clockFor(principal).now())
      : undefined;
    if (row) {
      // Its records still waiting for a run (the first run's, written with the schedule, or a run
      // whose hold failed) end FAILED, with their event, instead of staying PENDING for ever.
      for (const record of await billStore.unheldOfSchedule(this.db, principal, row.id))
        await this.failUnheld(record.id, 'The schedule was cancelled before this payment ran.');
      return row;
    }
    const existing = (await this.schedules(principal)).find((s) => s.id === id);
    if (!existing) throw notFound('Bill schedule');
    throw new DomainError('CONFLICT', `The schedule is already ${existing.status}.`);
  }

  /**
   * Moves a PENDING bill that holds no money to FAILED, re-checked under its row lock: a run
   * holding it meanwhile (holdScheduled takes the same lock first) keeps it, and its payment goes on.
   */
  private async failUnheld(recordId: string, reason: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const current = await billStore.lock(tx, recordId);
      if (current?.status !== 'PENDING' || current.holdId) return;
      await transition(tx, BILL, recordId, 'PENDING', 'FAILED', this.clockFor(current).now(), {
        failureReason: reason,
      });
    });
  }

  async beneficiaries(principal: Principal) {
    return billStore.beneficiaries(this.db, principal);
  }

  async deleteBeneficiary(principal: Principal, id: string) {
    const row = isUuid(id) ? await billStore.deleteBeneficiary(this.db, principal, id) : undefined;
    if (!row) throw notFound('Beneficiary');
    return row;
  }

  async record(principal: Principal, reference: string): Promise<BillRecordRow> {
    const row = await billStore.findByReference(this.db, principal, reference);
    if (!row) throw billNotFound(reference);
    return row;
  }

  async records(principal: Principal, filter: RecordFilter, page = 1, limit = 20) {
    checkPage(page, limit, MAX_RECORDS_PAGE);
    // A date endDate is inclusive: everything before the next Lagos midnight.
    const created = dateRange(filter.startDate, filter.endDate, { from: 'startDate', to: 'endDate' });
    const minAmount = filter.minAmount === undefined ? undefined : koboFrom(filter.minAmount, 'minAmount');
    const maxAmount = filter.maxAmount === undefined ? undefined : koboFrom(filter.maxAmount, 'maxAmount');
    if (minAmount !== undefined && maxAmount !== undefined && minAmount > maxAmount)
      throw badInput('maxAmount', 'maxAmount must not be below minAmount.');
    const { startDate: _s, endDate: _e, ...rest } = filter;
    const query = { ...rest, from: created.from, to: created.to, minAmount, maxAmount };
    const { rows, total } = await billStore.page(readsOf(this.db), principal, query, page, limit);
    return paged('bills', rows, total, page, limit);
  }

  async byId(id: string): Promise<BillRecordRow> {
    const row = await billStore.findById(this.db, id);
    if (!row) throw notFound('Bill record');
    return row;
  }

  /** A schedule and its first run's record, with the run's job, in one transaction (no provider call). */
  private schedule(
    principal: Principal,
    input: BillPaymentInput,
    payment: ResolvedPayment,
    reference: string,
    beneficiary: { name: string | null } | undefined,
    idempotencyKey: string | undefined,
  ): Promise<BillRecordRow> {
    if (!input.scheduleData)
      throw badInput(
        'scheduleData',
        'scheduleData is required when isSchedule is true: { executionDate, isRecurring, recurrencePattern }.',
      );
    const clock = this.clockFor(principal);
    const now = clock.now();
    const { executionAt, recurrence } = checkSchedule(input.scheduleData, now);
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'bills.schedule' };
    const fingerprint = { payment, reference: input.reference ?? null, executionAt, recurrence };
    return this.idempotency.transaction(scope, idempotencyKey, fingerprint, async (tx) => {
      const schedule = await billStore.insertSchedule(tx, {
        userId: principal.userId,
        environment: principal.environment,
        payment: { ...payment, reference },
        firstRunAt: executionAt,
        recurrence,
        nextRunAt: executionAt,
      });
      const metadata = {
        scheduleId: schedule.id,
        executionDate: executionAt.toISOString(),
        recurrencePattern: recurrence,
      };
      const row = await this.insertRecord(tx, principal, payment, reference, now, {
        scheduleId: schedule.id,
        metadata,
      });
      await enqueueJob(tx, {
        kind: BILL_JOBS.scheduleRun,
        payload: { scheduleId: schedule.id, run: 1 },
        runAt: executionAt,
        tenant: principal.userId,
        clock,
      });
      if (beneficiary) await this.saveBeneficiary(tx, principal, payment, beneficiary.name);
      return row;
    });
  }

  private insertRecord(
    tx: Executor,
    owner: Owner,
    payment: ResolvedPayment,
    reference: string,
    now: Date,
    links: { holdId?: string; scheduleId?: string; metadata?: Record<string, unknown> },
  ): Promise<BillRecordRow> {
    return insertOrConflict(reference, () =>
      billStore.insert(tx, this.recordRow(owner, payment, reference, now, links)),
    );
  }

  /** A new PENDING record as either way of opening writes it, with the environment's provider. */
  private recordRow(
    owner: Owner,
    payment: ResolvedPayment,
    reference: string,
    now: Date,
    links: { holdId?: string; scheduleId?: string; metadata?: Record<string, unknown> },
  ): BillRecordRow {
    return pendingBillRow(owner, payment, reference, this.providerFor(owner.environment).name, now, links);
  }

  /** The held bill's PENDING wallet transaction (`transaction.created`) and its status poll, the safety net. */
  private async openHeld(tx: Executor, record: BillRecordRow, transactionId: string, now: Date): Promise<void> {
    await openPendingTransaction(tx, record, billTransaction(record, transactionId), now);
    await enqueueJob(tx, {
      kind: BILL_JOBS.statusPoll,
      payload: { recordId: record.id },
      runAt: new Date(now.getTime() + POLL_AFTER_MS),
      tenant: record.userId,
      clock: this.clockFor(record),
    });
  }

  private async saveBeneficiary(tx: Executor, owner: Owner, payment: ResolvedPayment, name: string | null) {
    await billStore.saveBeneficiary(tx, {
      userId: owner.userId,
      environment: owner.environment,
      name: name ?? payment.customerName ?? payment.customer,
      type: payment.type,
      billerCode: payment.billerCode,
      billerName: payment.billerName,
      customer: payment.customer,
    });
  }
}

function checkSchedule(
  data: NonNullable<BillPaymentInput['scheduleData']>,
  now: Date,
): { executionAt: Date; recurrence: RecurrencePattern | null } {
  const executionAt = typeof data.executionDate === 'string' ? new Date(data.executionDate) : undefined;
  if (!executionAt || Number.isNaN(executionAt.getTime()))
    throw badInput('scheduleData.executionDate', 'scheduleData.executionDate must be an ISO 8601 date-time.');
  if (executionAt.getTime() <= now.getTime())
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

/**
 * A bill payment's own rules for its fields, without a lookup (the biller and its items are
 * looked up by the service): REST runs them beside its schema, so one 400 names every bad field.
 */
export const billPaymentFieldChecks = (input: Omit<BillPaymentInput, 'biller'>) => ({
  customer: () => billCustomer(input.type, input.customer),
  amount: () => optionalKoboFrom(input.amount),
  reference: () => referenceFrom(input.reference, 'BILL'),
  beneficiaryName: () => optionalText(input.beneficiaryName, 'beneficiaryName', 60),
});
