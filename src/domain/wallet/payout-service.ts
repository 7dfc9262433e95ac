import { and, eq } from 'drizzle-orm';
import { type CoolingOffPolicy, checkPayoutDestination } from '../payouts/cooling-off.js';
import type { PayoutControls } from '../payouts/payout-limits.js';
import type { Database, Executor } from '../../db/client.js';
import { payouts } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { recordEvent } from '../events/outbox.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { ledger } from '../ledger/ledger.js';
import { type PaymentsProvider, ProviderOutcomeUnknown, type TransferState } from '../payments/payments-provider.js';
import { koboFrom, nairaNumber } from './naira.js';
import { transactionStore } from './transaction-store.js';
import { openPendingTransaction, recordTransactionEvent, recordTransactionProgress } from './wallet-events.js';
import { insertOrConflict, referenceFrom, referenceTaken } from './wallet-service.js';

export type PayoutRow = typeof payouts.$inferSelect;

/** The flat fee of a payout, in kobo (₦25.00), taken on success only. */
export const PAYOUT_FEE_KOBO = 2_500n;
export const PAYOUT_RECONCILE_JOB = 'payout.reconcile';
/** When reconciliation first checks a payout the request path did not settle (then see keepPolling). */
const RECONCILE_AFTER_MS = 2 * 60_000;

export interface WithdrawInput {
  amount: unknown;
  bankCode: string;
  accountNumber: string;
  narration?: string | null;
  reference?: string | null;
}

const ACCOUNT_NUMBER = /^\d{10}$/;

/** Withdrawals to bank accounts: held at request, captured on success, released on failure, never guessed. */
export class PayoutService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly providerFor: (environment: Environment) => PaymentsProvider,
    private readonly coolingOff: CoolingOffPolicy = { periodMs: 0, capKobo: 0n },
    private readonly controls?: PayoutControls,
  ) {}

  banks(principal: Principal) {
    return this.providerFor(principal.environment).banks();
  }

  async resolveAccount(principal: Principal, input: { bankCode: string; accountNumber: string }) {
    const accountNumber = checkAccountNumber(input.accountNumber);
    const bankCode = input.bankCode.trim();
    if (!bankCode) throw badInput('bankCode', 'bankCode is required; list the codes with the banks.');
    const accountName = await this.providerFor(principal.environment).resolveAccount({ bankCode, accountNumber });
    return { bankCode, accountNumber, accountName };
  }

  async get(principal: Principal, reference: string): Promise<PayoutRow> {
    const [row] = await this.db
      .select()
      .from(payouts)
      .where(
        and(
          eq(payouts.userId, principal.userId),
          eq(payouts.environment, principal.environment),
          eq(payouts.reference, reference),
        ),
      );
    if (!row) throw notFound(`Payout ${JSON.stringify(reference)}`);
    return row;
  }

  async withdraw(principal: Principal, input: WithdrawInput, idempotencyKey: string | undefined): Promise<PayoutRow> {
    const amount = koboFrom(input.amount);
    const reference = referenceFrom(input.reference, 'PAY');
    const accountNumber = checkAccountNumber(input.accountNumber);
    const narration = input.narration?.trim() || null;
    if (narration && narration.length > 100) throw badInput('narration', 'narration must be at most 100 characters.');
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'wallet.withdraw' };
    const request = { amount, bankCode: input.bankCode.trim(), accountNumber, narration };
    // The hash covers what the caller sent: a generated reference would differ on every retry.
    return this.idempotency.run(
      scope,
      idempotencyKey,
      { ...request, reference: input.reference ?? null },
      async (claim) => {
        if (claim?.resourceId) return this.byId(claim.resourceId);
        const provider = this.providerFor(principal.environment);
        const bank = (await provider.banks()).find((b) => b.code === request.bankCode);
        if (!bank)
          throw badInput(
            'bankCode',
            `bankCode ${JSON.stringify(request.bankCode)} is not a known bank; list the codes with the banks.`,
          );
        const accountName = await provider.resolveAccount({ bankCode: bank.code, accountNumber });
        const destination = { bankCode: bank.code, accountNumber, amount };
        const existing = await transactionStore.findByReference(this.db, principal, reference);
        if (existing) throw referenceTaken(reference, existing.id);
        const now = this.clock.now();
        // Phase 1: the money is held and the payout recorded before the provider hears of it.
        const payout = await this.db.transaction(async (tx) => {
          await this.controls?.check(tx, principal, { amount, reference }, now);
          await checkPayoutDestination(tx, principal, destination, this.coolingOff, now);
          const holdId = await ledger.hold(tx, principal, amount + PAYOUT_FEE_KOBO, reference);
          const row = await insertOrConflict(reference, async () => {
            const [inserted] = await tx
              .insert(payouts)
              .values({
                userId: principal.userId,
                environment: principal.environment,
                reference,
                amount,
                fee: PAYOUT_FEE_KOBO,
                bankCode: bank.code,
                bankName: bank.name,
                accountNumber,
                accountName,
                narration,
                holdId,
                provider: provider.name,
                createdAt: now,
                updatedAt: now,
              })
              .returning();
            return inserted!;
          });
          await recordPayoutEvent(tx, row, now);
          await openPendingTransaction(
            tx,
            principal,
            {
              type: 'WITHDRAWAL',
              amount,
              fee: PAYOUT_FEE_KOBO,
              reference,
              description: narration,
              counterparty: { bankCode: bank.code, bankName: bank.name, accountNumber, accountName },
            },
            now,
          );
          await this.idempotency.attach(tx, claim, row.id);
          // The safety net: if this process dies before phase 2, reconciliation settles the payout.
          await enqueueJob(tx, {
            kind: PAYOUT_RECONCILE_JOB,
            payload: { payoutId: row.id },
            tenant: row.userId,
            runAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
          });
          return row;
        });
        // Phase 2: the provider call, outside any transaction; its answer settles the payout.
        const state = await sendTransfer(provider, payout);
        const settled = await this.settle(payout.id, state);
        await this.db.transaction((tx) => this.idempotency.finish(tx, claim, settled));
        return settled;
      },
    );
  }

  /**
   * Applies the provider's word on a payout, once: success captures the hold (fee to fees),
   * failure releases it; pending (or unknown) marks it processing and leaves it to reconciliation.
   */
  async settle(payoutId: string, state: TransferState): Promise<PayoutRow> {
    return this.db.transaction(async (tx) => {
      const [current] = await tx.select().from(payouts).where(eq(payouts.id, payoutId)).for('update');
      if (!current) throw notFound('Payout');
      if (current.status === 'completed' || current.status === 'failed') return current;
      const now = this.clock.now();
      if (state.status === 'succeeded' || state.status === 'failed') {
        const succeeded = state.status === 'succeeded';
        if (succeeded) await ledger.capture(tx, current.holdId, current.fee, now);
        else await ledger.release(tx, current.holdId, now);
        const row = await this.update(
          tx,
          current,
          {
            status: succeeded ? 'completed' : 'failed',
            providerRef: state.providerRef ?? current.providerRef,
            failureReason: succeeded ? null : (state.reason ?? 'The provider reported the transfer failed.'),
          },
          now,
        );
        const transaction = await this.settleTransaction(tx, current, succeeded ? 'COMPLETED' : 'FAILED', now);
        await recordPayoutEvent(tx, row, now);
        if (transaction) await recordTransactionEvent(tx, transaction, now);
        return row;
      }
      if (current.status === 'processing') return current;
      const row = await this.update(
        tx,
        current,
        { status: 'processing', providerRef: state.providerRef ?? current.providerRef },
        now,
      );
      await recordPayoutEvent(tx, row, now);
      await recordTransactionProgress(tx, row, row.reference, 'processing', now);
      return row;
    });
  }

  /** For the reconciliation job: asks the provider about a payout that is not settled. */
  async reconcile(payoutId: string): Promise<PayoutRow> {
    const payout = await this.byId(payoutId);
    if (payout.status === 'completed' || payout.status === 'failed') return payout;
    const provider = this.providerFor(payout.environment);
    let state = await provider.transferStatus(providerReference(payout));
    if (state.status === 'not_found' && payout.status === 'initiated') {
      // The process died before the provider heard of it: send it now (the provider dedupes by reference).
      state = await sendTransfer(provider, payout);
    }
    if (state.status === 'not_found') state = { providerRef: null, status: 'pending' };
    return this.settle(payout.id, state);
  }

  /** A payout by the reference the provider knows it by (see providerReference). */
  async byProviderReference(reference: string): Promise<PayoutRow | undefined> {
    const id = /^pgw-([0-9a-f-]{36})$/.exec(reference)?.[1];
    if (!id) return undefined;
    const [row] = await this.db.select().from(payouts).where(eq(payouts.id, id));
    return row;
  }

  async byId(id: string): Promise<PayoutRow> {
    const [row] = await this.db.select().from(payouts).where(eq(payouts.id, id));
    if (!row) throw notFound('Payout');
    return row;
  }

  private async update(tx: Executor, current: PayoutRow, changes: Partial<PayoutRow>, at: Date): Promise<PayoutRow> {
    const [row] = await tx
      .update(payouts)
      .set({ ...changes, version: current.version + 1, updatedAt: at })
      .where(eq(payouts.id, current.id))
      .returning();
    return row!;
  }

  private async settleTransaction(tx: Executor, payout: PayoutRow, status: 'COMPLETED' | 'FAILED', at: Date) {
    const transaction = await transactionStore.findByReference(tx, payout, payout.reference);
    return transaction ? transactionStore.settle(tx, transaction.id, status, at) : undefined;
  }
}

/** The reference the provider knows a payout by: unique across users (the caller's is unique per user only). */
export const providerReference = (payout: { id: string }) => `pgw-${payout.id}`;

/**
 * Sends a payout's transfer. A refusal by the provider (4xx) is a failure; a timeout, 5xx or any
 * other surprise leaves the outcome unknown (pending), for reconciliation, never a guess.
 */
async function sendTransfer(provider: PaymentsProvider, payout: PayoutRow): Promise<TransferState> {
  try {
    return await provider.transfer({
      reference: providerReference(payout),
      amount: payout.amount,
      bankCode: payout.bankCode,
      accountNumber: payout.accountNumber,
      accountName: payout.accountName,
      narration: payout.narration ?? `Payout ${payout.reference}`,
    });
  } catch (error) {
    if (error instanceof DomainError && error.status < 500)
      return { providerRef: null, status: 'failed', reason: error.message };
    return {
      providerRef: null,
      status: 'pending',
      reason: error instanceof ProviderOutcomeUnknown ? error.message : 'The provider did not answer clearly.',
    };
  }
}

function checkAccountNumber(value: string): string {
  const accountNumber = value.trim();
  if (!ACCOUNT_NUMBER.test(accountNumber))
    throw badInput('accountNumber', 'accountNumber must be a 10-digit NUBAN account number.');
  return accountNumber;
}

const PAYOUT_EVENT = {
  initiated: 'payout.initiated',
  processing: 'payout.processing',
  completed: 'payout.completed',
  failed: 'payout.failed',
} as const;

async function recordPayoutEvent(tx: Executor, row: PayoutRow, at: Date): Promise<void> {
  await recordEvent(
    tx,
    {
      type: PAYOUT_EVENT[row.status],
      userId: row.userId,
      environment: row.environment,
      data: {
        reference: row.reference,
        status: row.status,
        amount: nairaNumber(row.amount),
        fee: nairaNumber(row.fee),
        currency: 'NGN',
        bankName: row.bankName,
        accountNumber: row.accountNumber,
        accountName: row.accountName,
        version: row.version,
        updatedAt: row.updatedAt.toISOString(),
      },
    },
    at,
  );
}
