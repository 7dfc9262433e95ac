import { randomUUID } from 'node:crypto';
import type { Database, Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { accountTimeOf, type Clock, type ClockFor, clockLookup } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { checkFields, checkFieldsAwaiting, optionalText, requiredText } from '../field-checks.js';
import { recordEvent } from '../events/outbox.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { ledger, systemAccount, walletOf } from '../ledger/ledger.js';
import { answer, answerAsItStands, openKeyed } from '../lifecycle/keyed.js';
import { DEPOSIT, DEPOSIT_RECONCILE_JOB, depositEventData } from './deposit-lifecycle.js';
import { transition } from '../lifecycle/transition.js';
import { answerRefusal, dropRunningKey, isRefusal, type KeyRef } from '../money/key-claim.js';
import { REFERENCE_CONSTRAINT } from '../money/plain-write.js';
import { depositTransaction, initiatedDeposit, type NewDeposit } from './deposit-rows.js';
import { DEPOSIT_REFERENCE_CONSTRAINT, openDeposit, startDeposit, startsInOneStatement } from './deposit-writes.js';
import type {
  Authorization,
  CardDetails,
  ChargeState,
  Customer,
  NextAction,
  PayInAccount,
  PaymentsProvider,
} from '../payments/payments-provider.js';
import { type Bulkheads, UNBOUNDED_BULKHEADS } from '../upstream/bulkhead.js';
import { failureOutcome } from '../upstream/upstream-error.js';
import type { UserService } from '../users/user-service.js';
import { type DepositRow, depositStore, type VirtualAccountRow } from './deposit-store.js';
import { koboFrom } from './naira.js';
import type { PaymentMethodService } from './payment-method-service.js';
import { transactionStore } from './transaction-store.js';
import { openPendingTransaction, pendingTransactionRow, recordTransactionProgress } from './wallet-events.js';
import { settleWalletTransaction } from './wallet-transitions.js';
import { insertOrConflict, referenceFrom, referenceTaken, VIRTUAL_ACCOUNT_PREFIX } from '../money/reference.js';
import { type KeyedOpen, openKeyedOperation } from '../money/keyed-open.js';

export type { DepositRow } from './deposit-store.js';
export type DepositMethod = 'card' | 'bank_transfer' | 'ussd' | 'payment_link' | 'virtual_account';

export const DEPOSIT_JOBS = {
  /** Sandbox: the payer's money arrives for a transfer, USSD or payment-link deposit. */
  sandboxArrival: 'deposit.sandbox-arrival',
  /** A deposit still pending at its expiry fails. */
  expire: 'deposit.expire',
  /** Provider deposits: ask the provider, in case its webhook was lost. */
  reconcile: DEPOSIT_RECONCILE_JOB,
} as const;

export interface DepositCommon {
  amount: unknown;
  reference?: string | null;
  currency?: string | null;
  narration?: string | null;
  redirectUrl?: string | null;
  meta?: unknown;
}

const PAYMENT_LINK_MINUTES = 60;
/**
 * How long after its request's lease a deposit is looked at by `deposit.reconcile` when its
 * provider settles charges by itself (the sandbox): one still `initiated` then was cut off between
 * its two commits, and is finished (see `reconcile`).
 */
const FINISH_AFTER_LEASE_MS = 30_000;

/** A provider's answer to a deposit's call: the charge's state, and the account to pay into when it gives one. */
type Charged = { state: ChargeState; payIn?: PayInAccount };
type StartExtra = { cardToken?: string; paymentMethodId?: string; bankCode?: string; title?: string };
/** What the provider's answer adds to a deposit besides its status: the pay-in account, its expiry, the step awaited. */
type Details = Partial<
  Pick<
    DepositRow,
    'providerRef' | 'accountNumber' | 'bankName' | 'accountName' | 'expiresAt' | 'narration' | 'nextAction'
  >
>;

/**
 * Deposits into the NGN wallet (lifecycle DEPOSIT): card charges (with PIN, OTP or 3DS), one-off
 * transfer accounts, USSD, hosted payment links and the user's permanent virtual account. A deposit
 * is one commit before the provider call (key claim, record, events, wallet transaction) and one
 * after (the provider's answer applied, follow-up jobs, key answered); the wallet is credited once,
 * only on completion (the credit's ledger posting is unique per deposit). The first commit queues
 * `deposit.reconcile`, which finishes a deposit whose second commit never came; a retry with the
 * same key once the lease is over finishes it too. A transfer into a virtual account is one commit.
 */
export class DepositService {
  private readonly clockFor: ClockFor;

  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    private readonly idempotency: Idempotency,
    private readonly users: UserService,
    private readonly paymentMethods: PaymentMethodService,
    private readonly providerFor: (environment: Environment) => PaymentsProvider,
    /** Each provider's limit on calls in flight (upstream/bulkhead.ts), shared with its payouts. */
    private readonly bulkheads: Bulkheads = UNBOUNDED_BULKHEADS,
  ) {
    this.clockFor = clockLookup(clock);
  }

  /** The seed's `POST /wallet/deposit/payment-method`: a card is charged; a bank account pays by transfer. */
  async withPaymentMethod(
    principal: Principal,
    input: DepositCommon & { paymentMethodId: string },
    key: string | undefined,
  ): Promise<DepositRow> {
    const { fields, paymentMethodId } = checkFields({
      fields: () => depositFields(input),
      paymentMethodId: () => requiredText(input.paymentMethodId, 'paymentMethodId', 'paymentMethodId is required.'),
    });
    const method = await this.paymentMethods.get(principal, paymentMethodId);
    if (method.type === 'card')
      return this.start(principal, 'card', fields, key, {
        cardToken: method.providerToken!,
        paymentMethodId: method.id,
      });
    return this.start(principal, 'bank_transfer', fields, key, { paymentMethodId: method.id });
  }

  card(principal: Principal, input: DepositCommon & { paymentMethodId?: string | null }, key: string | undefined) {
    return this.withPaymentMethod(principal, { ...input, paymentMethodId: input.paymentMethodId ?? '' }, key);
  }

  bankTransfer(principal: Principal, input: DepositCommon, key: string | undefined) {
    return this.start(principal, 'bank_transfer', depositFields(input), key, {});
  }

  async ussd(principal: Principal, input: DepositCommon & { bankCode: string }, key: string | undefined) {
    const provider = this.providerFor(principal.environment);
    const { fields, bankCode } = await checkFieldsAwaiting({
      fields: () => depositFields(input),
      bankCode: () => ussdBankCode(provider, input.bankCode),
    });
    return this.start(principal, 'ussd', fields, key, { bankCode });
  }

  paymentLink(principal: Principal, input: DepositCommon & { title?: string | null }, key: string | undefined) {
    const fields = depositFields(input, { redirectUrlRequired: true });
    return this.start(principal, 'payment_link', fields, key, { title: input.title?.trim() || 'Wallet funding' });
  }

  async get(principal: Principal, reference: string): Promise<DepositRow> {
    const row = await depositStore.findByReference(this.db, principal, reference);
    if (!row) throw notFound(`Deposit ${JSON.stringify(reference)}`);
    return row;
  }

  /**
   * Continues a pending card charge with the PIN, OTP or 3DS result it waits for. Under an
   * Idempotency-Key a retry replays the step's answer instead of sending the PIN or OTP again; the
   * PIN and OTP never enter the key's fingerprint or its stored answer.
   */
  async authorize(
    principal: Principal,
    reference: string,
    authorization: Authorization,
    key?: string,
  ): Promise<DepositRow> {
    // A place in the provider's bulkhead before the key is claimed: refused, 503 BUSY with nothing
    // claimed or recorded; given back as soon as the provider has answered the step.
    const leave = await this.bulkheads.of(this.providerFor(principal.environment).name).enter();
    try {
      return await this.authorizeIn(principal, reference, authorization, key, leave);
    } finally {
      leave();
    }
  }

  /** A step's two commits and its provider call, in a place of the provider's bulkhead (`leave` gives it back). */
  private async authorizeIn(
    principal: Principal,
    reference: string,
    authorization: Authorization,
    key: string | undefined,
    leave: () => void,
  ): Promise<DepositRow> {
    const scope = {
      userId: principal.userId,
      environment: principal.environment,
      operation: 'wallet.deposit.authorize',
    };
    // The key is claimed in the transaction that reads and checks the deposit (one commit), the
    // provider is called outside it, and the step's outcome and the key's answer commit together.
    const opened = await openKeyed(
      this.db,
      this.idempotency,
      this.clockFor(principal).now(),
      { scope, key, input: { reference, ...authorization } },
      async (tx) => {
        const deposit = await depositStore.findByReference(tx, principal, reference);
        if (!deposit) throw notFound(`Deposit ${JSON.stringify(reference)}`);
        const step = (deposit.nextAction as NextAction | null)?.type;
        if (deposit.status !== 'pending' || deposit.method !== 'card' || !step || step === 'payment_instruction') {
          throw new DomainError(
            'CONFLICT',
            `Deposit ${JSON.stringify(reference)} is ${deposit.status.toUpperCase()} and waits for no authorization.`,
          );
        }
        if (authorization.type === 'pin' && !/^\d{4}$/.test(authorization.pin))
          throw badInput('pin', 'pin must be 4 digits.');
        if (authorization.type === 'otp' && !/^\d{4,8}$/.test(authorization.otp))
          throw badInput('otp', 'otp must be 4 to 8 digits.');
        await this.finishLater(tx, deposit, this.clockFor(deposit).now());
        return deposit;
      },
      async (tx, id) => (await depositStore.findById(tx, id))!,
    );
    if ('done' in opened) return opened.done;
    const resumed = 'resumed' in opened;
    const deposit = resumed ? opened.resumed : opened.opened;
    const { ref } = opened;
    const provider = this.providerFor(deposit.environment);
    const step = (deposit.nextAction as NextAction | null)?.type;
    // Taken over from a request that failed after its first commit: the step may have reached the
    // provider already. Finished as the provider tells; sent only if the charge still waits for it.
    if (resumed && (deposit.status !== 'pending' || !deposit.providerRef || !step))
      return answerAsItStands(this.db, ref, deposit);
    let state: ChargeState | undefined;
    try {
      if (resumed) state = await provider.chargeStatus(deposit.providerRef!);
      // A fresh step, or a charge still waiting for this one: the step is sent.
      if (!state || (state.status === 'pending' && (state.nextAction?.type ?? step) === step))
        state = await provider.authorize({ providerRef: deposit.providerRef!, step: step! }, authorization);
    } catch (error) {
      leave();
      // A refusal is the key's answer; a fault gives the key back, so a retry sends the step again.
      if (ref) await (isRefusal(error) ? answerRefusal(this.db, ref, error) : dropRunningKey(this.db, ref));
      throw error;
    }
    leave();
    return this.apply(deposit.id, state, (tx, row) => answer(tx, ref, row));
  }

  /** The user's permanent virtual account, created on first call. */
  async permanentAccount(principal: Principal): Promise<VirtualAccountRow> {
    const existing = await depositStore.virtualAccountOf(this.db, principal);
    if (existing) return existing;
    const provider = this.providerFor(principal.environment);
    const customer = await this.customerOf(principal);
    const account = await provider.permanentAccount({
      reference: `${principal.environment}-${principal.userId}`,
      customer,
    });
    const row = await depositStore.insertVirtualAccount(this.db, {
      userId: principal.userId,
      environment: principal.environment,
      provider: provider.name,
      providerRef: account.providerRef,
      accountNumber: account.accountNumber,
      bankName: account.bankName,
      accountName: account.accountName,
    });
    return row ?? (await this.permanentAccount(principal));
  }

  /**
   * Money arrived in a permanent virtual account (the provider's webhook, or the sandbox's
   * simulation): a completed deposit, credited once per provider reference.
   */
  async receiveIntoVirtualAccount(
    environment: Environment,
    accountNumber: string,
    amount: bigint,
    providerRef: string,
  ): Promise<DepositRow> {
    const account = await depositStore.virtualAccountByNumber(this.db, environment, accountNumber);
    if (!account) throw notFound('Virtual account');
    return this.db.transaction((tx) => this.receiveIn(tx, account, amount, providerRef));
  }

  /**
   * A transfer into a virtual account, recorded and credited in the caller's ONE transaction: there
   * is no provider call between them, so an acknowledged transfer is always a credited one. A
   * notice already recorded is answered as it is; one left pending (by a release that credited in a
   * second commit that failed) is credited now.
   */
  private async receiveIn(
    tx: Executor,
    account: VirtualAccountRow,
    amount: bigint,
    providerRef: string,
  ): Promise<DepositRow> {
    const credit = { providerRef, status: 'succeeded' } as const;
    const known = await depositStore.findByProviderRef(tx, account.provider, providerRef);
    if (known) return known.status === 'pending' ? this.applyIn(tx, known.id, credit) : known;
    const now = this.clockFor(account).now();
    const row = await depositStore.insertNotified(tx, {
      userId: account.userId,
      environment: account.environment,
      reference: `${VIRTUAL_ACCOUNT_PREFIX}${providerRef}`,
      method: 'virtual_account',
      amount,
      status: 'pending',
      provider: account.provider,
      providerRef,
      accountNumber: account.accountNumber,
      bankName: account.bankName,
      accountName: account.accountName,
      createdAt: now,
      updatedAt: now,
    });
    if (!row) {
      // A concurrent notice of the same transfer committed first (the insert waited for it).
      const twin = await depositStore.findByProviderRef(tx, account.provider, providerRef);
      if (twin) return twin.status === 'pending' ? this.applyIn(tx, twin.id, credit) : twin;
      // Its reference is held by a deposit of another transfer: only rows written before such
      // references were closed to callers can do that. Refused by name, never credited silently twice.
      throw new DomainError(
        'CONFLICT',
        `A transfer into virtual account ${account.accountNumber} (provider reference ${JSON.stringify(providerRef)}) cannot be recorded: reference ${JSON.stringify(`${VIRTUAL_ACCOUNT_PREFIX}${providerRef}`)} is already used.`,
      );
    }
    // An older transfer, payout or bill may hold the reference too: refused by name as well.
    await insertOrConflict(row.reference, () =>
      openPendingTransaction(
        tx,
        account,
        {
          type: 'DEPOSIT',
          amount,
          reference: row.reference,
          description: 'Transfer into virtual account',
          counterparty: { method: 'virtual_account' },
        },
        now,
      ),
    );
    // Events keep the order written within a transaction (`ordinal`): created, then completed.
    return this.applyIn(tx, row.id, credit);
  }

  /**
   * Sandbox only: a transfer of `amount` arrives in the caller's permanent virtual account. Under
   * an Idempotency-Key the simulated transfer's reference comes from the key, so a retry (even one
   * resuming after a crash) finds the same transfer instead of crediting twice.
   */
  async simulateVirtualAccountTransfer(principal: Principal, amountInput: unknown, key?: string): Promise<DepositRow> {
    // Only a provider with simulated payers (the sandbox's) can simulate a transfer.
    if (!this.providerFor(principal.environment).simulatedArrivalMs)
      throw badInput('amount', 'Transfers into a virtual account can be simulated only in sandbox.');
    const amount = koboFrom(amountInput);
    const scope = {
      userId: principal.userId,
      environment: principal.environment,
      operation: 'wallet.virtual-account.simulate',
    };
    // The account first (created once, through the provider); then the key's claim, the transfer,
    // its credit and the key's answer commit together.
    const account = await this.permanentAccount(principal);
    const transferRef =
      key === undefined
        ? crypto.randomUUID()
        : this.idempotency.fingerprint({ userId: principal.userId, scope: scope.operation, key }).slice(0, 32);
    return this.idempotency.transaction(scope, key, { amount }, (tx) =>
      this.receiveIn(tx, account, amount, `sbx_in_${transferRef}`),
    );
  }

  /**
   * Sandbox only: a card deposit charged to a card given in full, as a stored card's deposit is,
   * without storing the card (the event trigger's declined card). The provider tokenizes it; only
   * the token reaches the deposit path, whose key, record, charge and events are a card deposit's.
   */
  async simulateCardDeposit(
    principal: Principal,
    input: DepositCommon,
    card: CardDetails,
    key: string | undefined,
  ): Promise<DepositRow> {
    const provider = this.providerFor(principal.environment);
    // Only a provider with simulated payers (the sandbox's) takes a card that is not stored.
    if (!provider.simulatedArrivalMs)
      throw badInput('card', 'A card deposit without a stored card can be simulated only in sandbox.');
    const fields = depositFields(input);
    const { token } = await provider.tokenizeCard(card);
    return this.start(principal, 'card', fields, key, { cardToken: token });
  }

  /**
   * Applies the provider's word on a deposit: succeeded credits the wallet (once), failed ends
   * it, pending records the next action. Repeats (a duplicate webhook) change nothing.
   */
  async apply(
    depositId: string,
    state: ChargeState,
    then?: (tx: Executor, row: DepositRow) => Promise<void>,
  ): Promise<DepositRow> {
    return this.db.transaction(async (tx) => {
      const row = await this.applyIn(tx, depositId, state);
      await then?.(tx, row);
      return row;
    });
  }

  private async applyIn(
    tx: Executor,
    depositId: string,
    state: ChargeState,
    details: Details = {},
  ): Promise<DepositRow> {
    const current = await depositStore.findById(tx, depositId);
    if (!current) throw notFound('Deposit');
    if (current.status === 'completed' || current.status === 'failed') return current;
    const now = this.clockFor(current).now();
    if (state.status === 'succeeded') {
      // The credit first: provider clearing is the contended row.
      await ledger.post(tx, {
        environment: current.environment,
        kind: 'deposit',
        reference: current.id,
        description: `Deposit ${current.reference}`,
        lines: [
          { account: systemAccount(current.environment, 'provider_clearing'), amount: -current.amount },
          { account: walletOf(current.environment, current.userId), amount: current.amount },
        ],
      });
      return this.finish(tx, current, 'completed', { ...details, failureReason: null, nextAction: null }, now);
    }
    if (state.status === 'failed') {
      const failureReason = state.reason ?? 'The payment failed.';
      return this.finish(tx, current, 'failed', { ...details, failureReason, nextAction: null }, now);
    }
    const nextAction = state.nextAction ?? details.nextAction ?? current.nextAction;
    const providerRef = state.providerRef || details.providerRef || current.providerRef;
    const stage = (nextAction as NextAction | null)?.type ?? 'pending';
    const stageChanged = stage !== ((current.nextAction as NextAction | null)?.type ?? 'pending');
    // A repeated notice of the same step changes nothing: no write.
    if (
      current.status === 'pending' &&
      !stageChanged &&
      providerRef === current.providerRef &&
      !Object.keys(details).length
    )
      return current;
    const row = await transition(tx, DEPOSIT, current.id, current.status, 'pending', now, {
      ...details,
      nextAction,
      providerRef,
    });
    if (!row) return (await depositStore.findById(tx, depositId))!;
    if (current.status !== 'pending' || stageChanged)
      await recordTransactionProgress(tx, row, row.reference, stage, now);
    return row;
  }

  /** A deposit still pending at its expiry (or a sandbox transfer that never came) fails. */
  async expire(depositId: string): Promise<DepositRow> {
    return this.apply(depositId, {
      providerRef: '',
      status: 'failed',
      reason: 'No payment arrived before the deposit expired.',
    });
  }

  /** A deposit by the reference the provider knows it by (`pgw-<id>`). */
  async byProviderReference(reference: string): Promise<DepositRow | undefined> {
    const id = /^pgw-([0-9a-f-]{36})$/.exec(reference)?.[1];
    return id ? this.byId(id) : undefined;
  }

  /**
   * For reconciliation and webhooks: asks the provider for a pending charge's state (a webhook's
   * body is never trusted on its own) and applies it. A deposit its request left `initiated` (cut
   * off between its two commits) is finished once that request's lease is over: see `finishStart`.
   */
  async reconcile(depositId: string): Promise<DepositRow | undefined> {
    const deposit = await this.byId(depositId);
    if (!deposit || deposit.status === 'completed' || deposit.status === 'failed') return deposit;
    if (deposit.status === 'initiated') return this.finishStart(deposit);
    if (!deposit.providerRef) return deposit;
    if (deposit.method === 'bank_transfer' || deposit.method === 'payment_link') return deposit;
    const provider = this.providerFor(deposit.environment);
    // In the provider's bulkhead like a request's call (a refusal fails this run; the job retries).
    const providerRef = deposit.providerRef;
    const state = await this.bulkheads.of(provider.name).run(() => provider.chargeStatus(providerRef));
    return this.apply(deposit.id, state);
  }

  /** Whether `deposit.reconcile` keeps asking about a pending deposit: only a provider that may lose its webhooks. */
  isPolled(deposit: DepositRow): boolean {
    return this.providerFor(deposit.environment).pollChargesAfterMs !== undefined;
  }

  /**
   * A deposit left `initiated`: its request recorded it, then died or failed before recording the
   * provider's answer. A card charge is sent again under the same provider reference (the provider
   * answers with the charge it already has: it dedupes by reference) and its answer applied, so a
   * card the provider charged is credited once. Any other method gave its payer nothing to pay with
   * (the account, code or link was never answered), so it fails. Before the lease is over the
   * request may still be running, and it is left alone.
   */
  private async finishStart(deposit: DepositRow): Promise<DepositRow> {
    const now = this.clockFor(deposit).now();
    if (now.getTime() < deposit.updatedAt.getTime() + this.idempotency.leaseMs) return deposit;
    const provider = this.providerFor(deposit.environment);
    const cardToken =
      deposit.method === 'card' && deposit.paymentMethodId
        ? await depositStore.cardTokenOf(this.db, deposit.paymentMethodId)
        : undefined;
    if (!cardToken)
      return this.apply(deposit.id, {
        providerRef: '',
        status: 'failed',
        reason: 'The deposit was cut off before its payment details were given; nothing was paid.',
      });
    const { state, payIn } = await this.bulkheads
      .of(provider.name)
      .run(() => this.charge(provider, deposit, deposit.customer as Customer, { cardToken }));
    // No answer from the provider (a fault): still `initiated`, asked again at the job's next run.
    if (state.status === 'pending' && !state.providerRef) return deposit;
    return this.started(provider, deposit, state, payIn, null);
  }

  async byId(id: string): Promise<DepositRow | undefined> {
    return depositStore.findById(this.db, id);
  }

  private async start(
    principal: Principal,
    method: Exclude<DepositMethod, 'virtual_account'>,
    fields: DepositFields,
    key: string | undefined,
    extra: StartExtra,
  ): Promise<DepositRow> {
    const { amount, currency, reference, narration, redirectUrl, meta } = fields;
    const provider = this.providerFor(principal.environment);
    const customer = await this.customerOf(principal);
    // The hash covers what the caller sent: a generated reference would differ on every retry.
    const keyed = {
      scope: { userId: principal.userId, environment: principal.environment, operation: 'wallet.deposit' },
      key,
      input: { method, amount, currency, reference: fields.givenReference, narration, redirectUrl, meta, ...extra },
    };
    const row: NewDeposit = {
      // The provider knows the deposit by a reference unique across users (see providerReference).
      id: randomUUID(),
      userId: principal.userId,
      environment: principal.environment,
      reference,
      method,
      paymentMethodId: extra.paymentMethodId ?? null,
      amount,
      currency,
      provider: provider.name,
      redirectUrl,
      narration,
      meta,
      customer,
    };
    // A place in the provider's bulkhead before anything is written: refused, 503 BUSY with no key
    // claimed and nothing recorded; given back as soon as the provider has answered.
    const leave = await this.bulkheads.of(provider.name).enter();
    try {
      return await this.startIn(principal, provider, row, keyed, customer, extra, leave);
    } finally {
      leave();
    }
  }

  /** A deposit's two commits and its provider call, in a place of the provider's bulkhead (`leave` gives it back). */
  private async startIn(
    principal: Principal,
    provider: PaymentsProvider,
    row: NewDeposit,
    keyed: KeyedOpen<DepositRow>['keyed'],
    customer: Customer,
    extra: StartExtra,
    leave: () => void,
  ): Promise<DepositRow> {
    const now = this.clockFor(principal).now();
    // Recorded before the provider hears of it: a charge the provider takes never lacks its deposit.
    const opened = await openKeyedOperation(
      this.db,
      this.idempotency,
      now,
      this.opening(principal, provider, row, keyed, now),
      async (tx, id) => (await depositStore.findById(tx, id))!,
    );
    if ('done' in opened) return opened.done;
    const current = 'resumed' in opened ? opened.resumed : opened.opened;
    // Taken over from a request cut off after its first commit: a deposit it left `initiated` is
    // charged again under the same provider reference, which the provider answers with the charge
    // it already has (it dedupes by reference); anything later is answered as it stands.
    if (current.status !== 'initiated') return answerAsItStands(this.db, opened.ref, current);
    let charged: Charged;
    try {
      charged = await this.charge(provider, current, customer, extra);
    } finally {
      leave();
    }
    return this.started(provider, current, charged.state, charged.payIn, opened.ref);
  }

  /**
   * A deposit's first commit as the keyed open is given it: one statement (deposit-writes.ts),
   * and the steps for a key a dead request left running. Both write the rows of deposit-rows.ts.
   */
  private opening(
    principal: Principal,
    provider: PaymentsProvider,
    row: NewDeposit,
    keyed: KeyedOpen<DepositRow>['keyed'],
    now: Date,
  ): KeyedOpen<DepositRow> {
    // The deposit names its transaction, so its start reaches it by id.
    const deposit = initiatedDeposit(row, randomUUID(), now);
    return {
      owner: principal,
      reference: deposit.reference,
      keyed,
      // Another deposit, or another kind of transaction, holds the reference (a unique index refused it).
      referenceConstraints: [DEPOSIT_REFERENCE_CONSTRAINT, REFERENCE_CONSTRAINT],
      statement: (ref, leaseUntil) =>
        openDeposit(this.db, {
          deposit,
          transaction: pendingTransactionRow(deposit, depositTransaction(deposit), now),
          reconcileAt: this.reconcileAt(provider, now),
          leaseUntil,
          key: ref,
          clock: this.clockFor(principal),
        }),
      steps: (tx) => this.openSteps(tx, principal, provider, deposit, now),
    };
  }

  /** The same first commit as a transaction of separate statements: resuming a key a dead process left running. */
  private async openSteps(
    tx: Executor,
    principal: Principal,
    provider: PaymentsProvider,
    deposit: DepositRow,
    now: Date,
  ): Promise<DepositRow> {
    const { reference } = deposit;
    const taken = await transactionStore.findByReference(tx, principal, reference);
    if (taken) throw referenceTaken(reference, taken.id);
    const row = await insertOrConflict(reference, () => depositStore.insert(tx, deposit));
    await recordEvent(tx, { type: 'deposit.initiated', ...principal, data: { ...depositEventData(row) } }, now);
    await insertOrConflict(reference, () => openPendingTransaction(tx, principal, depositTransaction(row), now));
    await enqueueJob(tx, {
      kind: DEPOSIT_JOBS.reconcile,
      payload: { depositId: row.id },
      tenant: principal.userId,
      runAt: this.reconcileAt(provider, now),
      clock: this.clockFor(principal),
    });
    return row;
  }

  /**
   * When `deposit.reconcile` first looks at a new deposit: a provider that may lose its webhooks is
   * polled after its delay; for one that settles its charges itself, once the request's lease is
   * over, to finish a deposit whose second commit never came.
   */
  private reconcileAt(provider: PaymentsProvider, now: Date): Date {
    return new Date(now.getTime() + (provider.pollChargesAfterMs ?? this.idempotency.leaseMs + FINISH_AFTER_LEASE_MS));
  }

  /**
   * For a step of a provider that settles charges itself (nothing polls them): `deposit.reconcile`
   * looks once the step's lease is over, in case the step's second commit never came.
   */
  private async finishLater(tx: Executor, deposit: DepositRow, now: Date): Promise<void> {
    const provider = this.providerFor(deposit.environment);
    if (provider.pollChargesAfterMs !== undefined) return;
    await enqueueJob(tx, {
      kind: DEPOSIT_JOBS.reconcile,
      payload: { depositId: deposit.id },
      tenant: deposit.userId,
      runAt: this.reconcileAt(provider, now),
      clock: this.clockFor(deposit),
    });
  }

  /** The provider call of a deposit, outside any transaction; a failure is classified (only a refusal fails it). */
  private async charge(
    provider: PaymentsProvider,
    deposit: DepositRow,
    customer: Customer,
    extra: StartExtra,
  ): Promise<Charged> {
    const reference = providerReference(deposit);
    const { amount, method, redirectUrl } = deposit;
    try {
      if (method === 'card') {
        const charge = { reference, amount, cardToken: extra.cardToken!, customer };
        return { state: await provider.chargeCard(redirectUrl ? { ...charge, redirectUrl } : charge) };
      }
      if (method === 'bank_transfer') {
        const payIn = await provider.bankTransferAccount({ reference, amount, customer });
        return { state: { providerRef: payIn.providerRef, status: 'pending' }, payIn };
      }
      if (method === 'ussd')
        return { state: await provider.ussd({ reference, amount, bankCode: extra.bankCode!, customer }) };
      const link = await provider.paymentLink({
        reference,
        amount,
        customer,
        redirectUrl: redirectUrl!,
        title: extra.title!,
      });
      const nextAction: NextAction = { type: 'redirect_url', redirect_url: { url: link.link } };
      return { state: { providerRef: link.providerRef, status: 'pending', nextAction } };
    } catch (error) {
      const failure = failureOutcome(error);
      return {
        state: failure.refused
          ? { providerRef: '', status: 'failed', reason: failure.reason }
          : { providerRef: '', status: 'pending' },
      };
    }
  }

  /** The second commit of a deposit: the provider's answer with its pay-in details, the follow-up jobs, the key's answer. */
  private async started(
    provider: PaymentsProvider,
    deposit: DepositRow,
    state: ChargeState,
    payIn: PayInAccount | undefined,
    key: KeyRef | null,
  ): Promise<DepositRow> {
    const clock = this.clockFor(deposit);
    const now = clock.now();
    // A provider's expiry is read on the process clock; the account's jobs and records are on its own.
    const expiresAt = payIn?.expiresAt
      ? accountTimeOf(clock, payIn.expiresAt)
      : deposit.method === 'payment_link'
        ? new Date(now.getTime() + PAYMENT_LINK_MINUTES * 60_000)
        : null;
    const details: Details = {
      providerRef: state.providerRef || null,
      accountNumber: payIn?.accountNumber ?? null,
      bankName: payIn?.bankName ?? null,
      accountName: payIn?.accountName ?? null,
      expiresAt,
      narration: deposit.narration ?? payIn?.note ?? null,
      nextAction:
        state.nextAction ?? (payIn ? { type: 'payment_instruction', payment_instruction: { note: payIn.note } } : null),
    };
    const arrivalMs = provider.simulatedArrivalMs?.(deposit);
    if (state.status === 'pending' && startsInOneStatement(deposit)) {
      const nextAction = state.nextAction ?? details.nextAction ?? deposit.nextAction;
      const moved = await startDeposit(this.db, {
        deposit,
        changes: {
          providerRef: state.providerRef || details.providerRef || deposit.providerRef,
          accountNumber: details.accountNumber ?? null,
          bankName: details.bankName ?? null,
          accountName: details.accountName ?? null,
          expiresAt: details.expiresAt ?? null,
          narration: details.narration ?? null,
          nextAction,
        },
        stage: (nextAction as NextAction | null)?.type ?? 'pending',
        at: now,
        expireAt: expiresAt,
        arrivalAt: arrivalMs === undefined ? null : new Date(now.getTime() + arrivalMs),
        key,
        clock,
      });
      if (moved) return moved;
    }
    return this.db.transaction(async (tx) => {
      const tenant = deposit.userId;
      const payload = { depositId: deposit.id };
      if (state.status !== 'failed' && expiresAt)
        await enqueueJob(tx, { kind: DEPOSIT_JOBS.expire, payload, runAt: expiresAt, tenant, clock });
      // A simulated payer (sandbox) pays by itself after a while.
      if (state.status !== 'failed' && arrivalMs !== undefined)
        await enqueueJob(tx, {
          kind: DEPOSIT_JOBS.sandboxArrival,
          payload,
          runAt: new Date(now.getTime() + arrivalMs),
          tenant,
          clock,
        });
      const row = await this.applyIn(tx, deposit.id, state, details);
      await answer(tx, key, row);
      return row;
    });
  }

  private async customerOf(principal: Principal): Promise<Customer> {
    const [user] = await this.users.usersByIds([principal.userId]);
    const name = [user?.firstName, user?.lastName].filter(Boolean).join(' ') || (user?.email ?? 'Customer');
    return { email: user?.email ?? '', name, phoneNumber: user?.phone ?? '' };
  }

  private async finish(
    tx: Executor,
    current: DepositRow,
    status: 'completed' | 'failed',
    changes: Partial<DepositRow>,
    now: Date,
  ): Promise<DepositRow> {
    const row = await transition(tx, DEPOSIT, current.id, current.status, status, now, changes);
    if (!row) return (await depositStore.findById(tx, current.id))!;
    await settleWalletTransaction(tx, row, row.reference, status === 'completed' ? 'COMPLETED' : 'FAILED', now);
    return row;
  }
}

/** The reference the provider knows a deposit by: unique across users (the caller's is unique per user only). */
const providerReference = (deposit: { id: string }) => `pgw-${deposit.id}`;

/** A deposit's own fields, parsed: what every way of depositing takes. */
interface DepositFields {
  amount: bigint;
  currency: string;
  reference: string;
  /** The reference as the caller sent it (null when one is generated), for the key's fingerprint. */
  givenReference: string | null;
  narration: string | null;
  redirectUrl: string | null;
  meta: unknown;
}

/** A deposit's own rules for its common fields: the service runs them, and REST beside its schema. */
export const depositFieldChecks = (input: DepositCommon, options: { redirectUrlRequired?: boolean } = {}) => ({
  amount: () => koboFrom(input.amount),
  currency: () => nairaCurrency(input.currency),
  reference: () => referenceFrom(input.reference, 'DEP'),
  narration: () => optionalText(input.narration, 'narration', 140),
  redirectUrl: () => redirectUrlFrom(input.redirectUrl, options.redirectUrlRequired ?? false),
  meta: () => metaFrom(input.meta),
});

/** Every common field checked, so one refusal names each bad one. */
function depositFields(input: DepositCommon, options: { redirectUrlRequired?: boolean } = {}): DepositFields {
  return { ...checkFields(depositFieldChecks(input, options)), givenReference: input.reference ?? null };
}

function nairaCurrency(given: string | null | undefined): string {
  const currency = (given ?? 'NGN').trim().toUpperCase();
  if (currency !== 'NGN') throw badInput('currency', 'currency must be NGN: the wallet holds naira only.');
  return currency;
}

function redirectUrlFrom(given: string | null | undefined, required: boolean): string | null {
  const redirectUrl = given?.trim() || null;
  if (!redirectUrl && required)
    throw badInput('redirectUrl', 'redirectUrl is required: where the payer returns after paying.');
  if (redirectUrl && !/^https?:\/\/\S+$/.test(redirectUrl))
    throw badInput('redirectUrl', 'redirectUrl must be an http(s) URL.');
  return redirectUrl;
}

function metaFrom(given: unknown): unknown {
  const meta = given ?? null;
  if (meta !== null && (typeof meta !== 'object' || Array.isArray(meta) || JSON.stringify(meta).length > 4096))
    throw badInput('meta', 'meta must be an object of at most 4 KB.');
  return meta;
}

async function ussdBankCode(provider: PaymentsProvider, given: string | null | undefined): Promise<string> {
  const bankCode = requiredText(given, 'bankCode', 'bankCode is required: the bank whose USSD code the payer dials.');
  if (!(await provider.banks()).some((b) => b.code === bankCode))
    throw badInput(
      'bankCode',
      `bankCode ${JSON.stringify(bankCode)} is not a bank with USSD payments; list them with the banks.`,
    );
  return bankCode;
}
