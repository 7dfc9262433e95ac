import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { deposits, virtualAccounts } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { recordEvent } from '../events/outbox.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { ledger, systemAccount, walletOf } from '../ledger/ledger.js';
import type {
  Authorization,
  ChargeState,
  Customer,
  NextAction,
  PayInAccount,
  PaymentsProvider,
} from '../payments/payments-provider.js';
import { SANDBOX_PAYMENTS } from '../payments/sandbox-payments-provider.js';
import { failureOutcome } from '../upstream/upstream-error.js';
import type { UserService } from '../users/user-service.js';
import { koboFrom, nairaNumber } from './naira.js';
import type { PaymentMethodService } from './payment-method-service.js';
import { transactionStore } from './transaction-store.js';
import { openPendingTransaction, recordTransactionEvent, recordTransactionProgress } from './wallet-events.js';
import { insertOrConflict, referenceFrom, referenceTaken } from './wallet-service.js';

export type DepositRow = typeof deposits.$inferSelect;
export type DepositMethod = 'card' | 'bank_transfer' | 'ussd' | 'payment_link' | 'virtual_account';

export const DEPOSIT_JOBS = {
  /** Sandbox: the payer's money arrives for a transfer, USSD or payment-link deposit. */
  sandboxArrival: 'deposit.sandbox-arrival',
  /** A deposit still pending at its expiry fails. */
  expire: 'deposit.expire',
  /** Provider deposits: ask the provider, in case its webhook was lost. */
  reconcile: 'deposit.reconcile',
} as const;

const RECONCILE_EVERY_MS = 5 * 60_000;

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
 * Deposits into the NGN wallet: card charges (with PIN, OTP or 3DS), one-off transfer accounts,
 * USSD, hosted payment links and the user's permanent virtual account. initiated → pending →
 * completed | failed; the wallet is credited exactly once, only on completion (the credit's
 * ledger posting is unique per deposit).
 */
export class DepositService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly users: UserService,
    private readonly paymentMethods: PaymentMethodService,
    private readonly providerFor: (environment: Environment) => PaymentsProvider,
  ) {}

  /** The seed's `POST /wallet/deposit/payment-method`: a card is charged; a bank account pays by transfer. */
  async withPaymentMethod(
    principal: Principal,
    input: DepositCommon & { paymentMethodId: string },
    key: string | undefined,
  ): Promise<DepositRow> {
    if (!input.paymentMethodId?.trim()) throw badInput('paymentMethodId', 'paymentMethodId is required.');
    const method = await this.paymentMethods.get(principal, input.paymentMethodId.trim());
    if (method.type === 'card')
      return this.start(principal, 'card', input, key, {
        cardToken: method.providerToken!,
        paymentMethodId: method.id,
      });
    return this.start(principal, 'bank_transfer', input, key, { paymentMethodId: method.id });
  }

  card(principal: Principal, input: DepositCommon & { paymentMethodId?: string | null }, key: string | undefined) {
    return this.withPaymentMethod(principal, { ...input, paymentMethodId: input.paymentMethodId ?? '' }, key);
  }

  bankTransfer(principal: Principal, input: DepositCommon, key: string | undefined) {
    return this.start(principal, 'bank_transfer', input, key, {});
  }

  ussd(principal: Principal, input: DepositCommon & { bankCode: string }, key: string | undefined) {
    if (!input.bankCode?.trim())
      throw badInput('bankCode', 'bankCode is required: the bank whose USSD code the payer dials.');
    return this.start(principal, 'ussd', input, key, { bankCode: input.bankCode.trim() });
  }

  paymentLink(principal: Principal, input: DepositCommon & { title?: string | null }, key: string | undefined) {
    if (!input.redirectUrl)
      throw badInput('redirectUrl', 'redirectUrl is required: where the payer returns after paying.');
    return this.start(principal, 'payment_link', input, key, { title: input.title?.trim() || 'Wallet funding' });
  }

  async get(principal: Principal, reference: string): Promise<DepositRow> {
    const [row] = await this.db
      .select()
      .from(deposits)
      .where(
        and(
          eq(deposits.userId, principal.userId),
          eq(deposits.environment, principal.environment),
          eq(deposits.reference, reference),
        ),
      );
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
    const scope = {
      userId: principal.userId,
      environment: principal.environment,
      operation: 'wallet.deposit.authorize',
    };
    return this.idempotency.run(scope, key, { reference, ...authorization }, async (claim) => {
      const deposit = await this.get(principal, reference);
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
      const state = await this.providerFor(deposit.environment).authorize(
        { providerRef: deposit.providerRef!, step },
        authorization,
      );
      return this.apply(deposit.id, state, (tx, row) => this.idempotency.finish(tx, claim, row));
    });
  }

  /** The user's permanent virtual account, created on first call. */
  async permanentAccount(principal: Principal): Promise<typeof virtualAccounts.$inferSelect> {
    const [existing] = await this.db
      .select()
      .from(virtualAccounts)
      .where(and(eq(virtualAccounts.userId, principal.userId), eq(virtualAccounts.environment, principal.environment)));
    if (existing) return existing;
    const customer = await this.customerOf(principal);
    const account = await this.providerFor(principal.environment).permanentAccount({
      reference: `${principal.environment}-${principal.userId}`,
      customer,
    });
    const [row] = await this.db
      .insert(virtualAccounts)
      .values({
        userId: principal.userId,
        environment: principal.environment,
        provider: this.providerFor(principal.environment).name,
        providerRef: account.providerRef,
        accountNumber: account.accountNumber,
        bankName: account.bankName,
        accountName: account.accountName,
      })
      .onConflictDoNothing()
      .returning();
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
    const [account] = await this.db
      .select()
      .from(virtualAccounts)
      .where(and(eq(virtualAccounts.environment, environment), eq(virtualAccounts.accountNumber, accountNumber)));
    if (!account) throw notFound('Virtual account');
    const [existing] = await this.db
      .select()
      .from(deposits)
      .where(and(eq(deposits.provider, account.provider), eq(deposits.providerRef, providerRef)));
    if (existing) return existing;
    const now = this.clock.now();
    const deposit = await this.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(deposits)
        .values({
          userId: account.userId,
          environment,
          reference: `VA-${providerRef}`,
          method: 'virtual_account',
          amount,
          status: 'pending',
          provider: account.provider,
          providerRef,
          accountNumber,
          bankName: account.bankName,
          accountName: account.accountName,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing()
        .returning();
      if (!row) return undefined;
      await openPendingTransaction(
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
      );
      return row;
    });
    if (!deposit)
      return (
        await this.db
          .select()
          .from(deposits)
          .where(and(eq(deposits.provider, account.provider), eq(deposits.providerRef, providerRef)))
      )[0]!;
    return this.apply(deposit.id, { providerRef, status: 'succeeded' });
  }

  /**
   * Sandbox only: a transfer of `amount` arrives in the caller's permanent virtual account. Under
   * an Idempotency-Key the simulated transfer's reference comes from the key, so a retry (even one
   * resuming after a crash) finds the same transfer instead of crediting twice.
   */
  async simulateVirtualAccountTransfer(principal: Principal, amountInput: unknown, key?: string): Promise<DepositRow> {
    if (principal.environment !== 'sandbox')
      throw badInput('amount', 'Transfers into a virtual account can be simulated only in sandbox.');
    const amount = koboFrom(amountInput);
    const scope = {
      userId: principal.userId,
      environment: principal.environment,
      operation: 'wallet.virtual-account.simulate',
    };
    return this.idempotency.run(scope, key, { amount }, async () => {
      const account = await this.permanentAccount(principal);
      const transferRef =
        key === undefined
          ? crypto.randomUUID()
          : this.idempotency.fingerprint({ userId: principal.userId, scope: scope.operation, key }).slice(0, 32);
      return this.receiveIntoVirtualAccount(
        principal.environment,
        account.accountNumber,
        amount,
        `sbx_in_${transferRef}`,
      );
    });
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

  private async applyIn(tx: Executor, depositId: string, state: ChargeState): Promise<DepositRow> {
    const [current] = await tx.select().from(deposits).where(eq(deposits.id, depositId)).for('update');
    if (!current) throw notFound('Deposit');
    if (current.status === 'completed' || current.status === 'failed') return current;
    const now = this.clock.now();
    if (state.status === 'succeeded') {
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
      return this.finishDeposit(tx, current, 'completed', null, now);
    }
    if (state.status === 'failed')
      return this.finishDeposit(tx, current, 'failed', state.reason ?? 'The payment failed.', now);
    const changes = {
      status: 'pending' as const,
      nextAction: state.nextAction ?? current.nextAction,
      providerRef: state.providerRef || current.providerRef,
    };
    const row = await this.update(tx, current, changes, now);
    if (current.status !== 'pending') await recordDepositEvent(tx, row, now);
    const stage = (row.nextAction as NextAction | null)?.type ?? 'pending';
    if (current.status !== 'pending' || stage !== (current.nextAction as NextAction | null)?.type)
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
   * body is never trusted on its own) and applies it.
   */
  async reconcile(depositId: string): Promise<DepositRow | undefined> {
    const deposit = await this.byId(depositId);
    if (!deposit || deposit.status === 'completed' || deposit.status === 'failed' || !deposit.providerRef)
      return deposit;
    if (deposit.method === 'bank_transfer' || deposit.method === 'payment_link') return deposit;
    const state = await this.providerFor(deposit.environment).chargeStatus(deposit.providerRef);
    return this.apply(deposit.id, state);
  }

  async byId(id: string): Promise<DepositRow | undefined> {
    const [row] = await this.db.select().from(deposits).where(eq(deposits.id, id));
    return row;
  }

  private async start(
    principal: Principal,
    method: Exclude<DepositMethod, 'virtual_account'>,
    input: DepositCommon,
    key: string | undefined,
    extra: { cardToken?: string; paymentMethodId?: string; bankCode?: string; title?: string },
  ): Promise<DepositRow> {
    const amount = koboFrom(input.amount);
    const currency = (input.currency ?? 'NGN').trim().toUpperCase();
    if (currency !== 'NGN') throw badInput('currency', 'currency must be NGN: the wallet holds naira only.');
    const reference = referenceFrom(input.reference, 'DEP');
    const narration = input.narration?.trim() || null;
    if (narration && narration.length > 140) throw badInput('narration', 'narration must be at most 140 characters.');
    const redirectUrl = input.redirectUrl?.trim() || null;
    if (redirectUrl && !/^https?:\/\/\S+$/.test(redirectUrl))
      throw badInput('redirectUrl', 'redirectUrl must be an http(s) URL.');
    if (
      input.meta !== undefined &&
      input.meta !== null &&
      (typeof input.meta !== 'object' || Array.isArray(input.meta) || JSON.stringify(input.meta).length > 4096)
    ) {
      throw badInput('meta', 'meta must be an object of at most 4 KB.');
    }
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'wallet.deposit' };
    // The hash covers what the caller sent: a generated reference would differ on every retry.
    const request = {
      method,
      amount,
      currency,
      reference: input.reference ?? null,
      narration,
      redirectUrl,
      meta: input.meta ?? null,
      ...extra,
    };
    return this.idempotency.run(scope, key, request, async (claim) => {
      if (claim?.resourceId) return (await this.byId(claim.resourceId))!;
      const existing = await transactionStore.findByReference(this.db, principal, reference);
      if (existing) throw referenceTaken(reference, existing.id);
      const provider = this.providerFor(principal.environment);
      const customer = await this.customerOf(principal);
      const now = this.clock.now();
      // The provider knows the deposit by a reference unique across users (the caller's is unique per user only).
      const depositId = randomUUID();
      const providerReference = `pgw-${depositId}`;
      if (method === 'ussd' && !(await provider.banks()).some((b) => b.code === extra.bankCode)) {
        throw badInput(
          'bankCode',
          `bankCode ${JSON.stringify(extra.bankCode)} is not a bank with USSD payments; list them with the banks.`,
        );
      }
      // Recorded before the provider hears of it: a charge the provider takes never lacks its deposit.
      await this.db.transaction(async (tx) => {
        const row = await insertOrConflict(reference, async () => {
          const [inserted] = await tx
            .insert(deposits)
            .values({
              id: depositId,
              userId: principal.userId,
              environment: principal.environment,
              reference,
              method,
              paymentMethodId: extra.paymentMethodId ?? null,
              amount,
              currency,
              status: 'initiated',
              provider: provider.name,
              redirectUrl,
              narration,
              meta: input.meta ?? null,
              customer,
              createdAt: now,
              updatedAt: now,
            })
            .returning();
          return inserted!;
        });
        await recordDepositEvent(tx, row, now);
        await openPendingTransaction(
          tx,
          principal,
          { type: 'DEPOSIT', amount, reference, description: narration, counterparty: { method } },
          now,
        );
        await this.idempotency.attach(tx, claim, row.id);
        // A provider's webhook may never come: pending charges are polled until they settle.
        if (provider.name !== 'sandbox')
          await enqueueJob(tx, {
            kind: DEPOSIT_JOBS.reconcile,
            payload: { depositId: row.id },
            tenant: principal.userId,
            runAt: new Date(now.getTime() + RECONCILE_EVERY_MS),
          });
      });
      let state: ChargeState;
      let payIn: PayInAccount | undefined;
      try {
        if (method === 'card') {
          state = await provider.chargeCard({
            reference: providerReference,
            amount,
            cardToken: extra.cardToken!,
            customer,
            ...(redirectUrl ? { redirectUrl } : {}),
          });
        } else if (method === 'bank_transfer') {
          payIn = await provider.bankTransferAccount({ reference: providerReference, amount, customer });
          state = { providerRef: payIn.providerRef, status: 'pending' };
        } else if (method === 'ussd') {
          state = await provider.ussd({ reference: providerReference, amount, bankCode: extra.bankCode!, customer });
        } else {
          const created = await provider.paymentLink({
            reference: providerReference,
            amount,
            customer,
            redirectUrl: redirectUrl!,
            title: extra.title!,
          });
          state = {
            providerRef: created.providerRef,
            status: 'pending',
            nextAction: { type: 'redirect_url', redirect_url: { url: created.link } },
          };
        }
      } catch (error) {
        // A refusal fails the deposit; anything else leaves it pending for reconciliation, never a guess.
        const failure = failureOutcome(error);
        state = failure.refused
          ? { providerRef: '', status: 'failed', reason: failure.reason }
          : { providerRef: '', status: 'pending' };
      }
      const expiresAt =
        payIn?.expiresAt ??
        (method === 'payment_link' ? new Date(now.getTime() + PAYMENT_LINK_MINUTES * 60_000) : null);
      await this.db.transaction(async (tx) => {
        await tx
          .update(deposits)
          .set({
            providerRef: state.providerRef || null,
            accountNumber: payIn?.accountNumber ?? null,
            bankName: payIn?.bankName ?? null,
            accountName: payIn?.accountName ?? null,
            expiresAt,
            narration: narration ?? payIn?.note ?? null,
            nextAction:
              state.nextAction ??
              (payIn ? { type: 'payment_instruction', payment_instruction: { note: payIn.note } } : null),
          })
          .where(eq(deposits.id, depositId));
        if (state.status === 'failed') return;
        if (expiresAt)
          await enqueueJob(tx, {
            kind: DEPOSIT_JOBS.expire,
            payload: { depositId },
            runAt: expiresAt,
            tenant: principal.userId,
          });
        if (provider.name === 'sandbox' && method !== 'card' && amount !== SANDBOX_PAYMENTS.neverArrivesKobo) {
          await enqueueJob(tx, {
            kind: DEPOSIT_JOBS.sandboxArrival,
            payload: { depositId },
            runAt: new Date(now.getTime() + SANDBOX_PAYMENTS.arrivalSeconds * 1000),
            tenant: principal.userId,
          });
        }
      });
      const settled = await this.apply(depositId, state);
      await this.db.transaction((tx) => this.idempotency.finish(tx, claim, settled));
      return settled;
    });
  }

  private async customerOf(principal: Principal): Promise<Customer> {
    const [user] = await this.users.usersByIds([principal.userId]);
    const name = [user?.firstName, user?.lastName].filter(Boolean).join(' ') || (user?.email ?? 'Customer');
    return { email: user?.email ?? '', name, phoneNumber: user?.phone ?? '' };
  }

  private async finishDeposit(
    tx: Executor,
    current: DepositRow,
    status: 'completed' | 'failed',
    reason: string | null,
    now: Date,
  ): Promise<DepositRow> {
    const row = await this.update(tx, current, { status, failureReason: reason, nextAction: null }, now);
    const transaction = await transactionStore.findByReference(tx, current, current.reference);
    const settled = transaction
      ? await transactionStore.settle(tx, transaction.id, status === 'completed' ? 'COMPLETED' : 'FAILED', now)
      : undefined;
    await recordDepositEvent(tx, row, now);
    if (settled) await recordTransactionEvent(tx, settled, now);
    return row;
  }

  private async update(tx: Executor, current: DepositRow, changes: Partial<DepositRow>, at: Date): Promise<DepositRow> {
    const [row] = await tx
      .update(deposits)
      .set({ ...changes, version: current.version + 1, updatedAt: at })
      .where(eq(deposits.id, current.id))
      .returning();
    return row!;
  }
}

const DEPOSIT_EVENT = {
  initiated: 'deposit.initiated',
  pending: 'deposit.pending',
  completed: 'deposit.completed',
  failed: 'deposit.failed',
} as const;

/** The seed's deposit `data`: reference, status, amount, currency, method, accountNumber, bankName. */
async function recordDepositEvent(tx: Executor, row: DepositRow, at: Date): Promise<void> {
  await recordEvent(
    tx,
    {
      type: DEPOSIT_EVENT[row.status],
      userId: row.userId,
      environment: row.environment,
      data: {
        reference: row.reference,
        status: row.status.toUpperCase(),
        amount: nairaNumber(row.amount),
        currency: row.currency,
        method: row.method,
        accountNumber: row.accountNumber,
        bankName: row.bankName,
        version: row.version,
        updatedAt: row.updatedAt.toISOString(),
      },
    },
    at,
  );
}
