import { randomUUID } from 'node:crypto';
import type { PayoutControls } from '../payouts/payout-limits.js';
import type { Database } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { type Clock, type ClockFor, clockLookup } from '../clock.js';
import { badInput, notFound } from '../errors.js';
import { checkFields, checkFieldsAwaiting, optionalText, requiredText } from '../field-checks.js';
import type { Idempotency, IdempotencyScope } from '../idempotency/idempotency.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { PAYOUT_HELD, PAYOUT_RECONCILE_JOB, payoutEventData } from './payout-lifecycle.js';
import { HeldOperation, type KeyedOpen } from '../money/held-operation.js';
import type { PaymentsProvider, TransferState } from '../payments/payments-provider.js';
import { type CoolingOffPolicy, checkPayoutDestination, coolingOffApplies } from '../payouts/cooling-off.js';
import { type Bulkheads, UNBOUNDED_BULKHEADS } from '../upstream/bulkhead.js';
import { failureOutcome } from '../upstream/upstream-error.js';
import type { KeyRef } from '../money/key-claim.js';
import { koboFrom } from './naira.js';
import { type PayoutRow, payoutStore } from './payout-store.js';
import { openPayout } from './payout-writes.js';
import { WalletTurns } from './wallet-turns.js';
import { openPendingTransaction } from './wallet-events.js';
import { HELD_WALLET } from './held-wallet.js';
import { transactionStore } from './transaction-store.js';
import { REFERENCE_CONSTRAINT } from '../money/plain-write.js';
import { insertOrConflict, referenceFrom, referenceTaken } from '../money/reference.js';

export type { PayoutRow } from './payout-store.js';

/** The flat fee of a payout, in kobo (₦25.00), taken on success only. */
export const PAYOUT_FEE_KOBO = 2_500n;
export { PAYOUT_RECONCILE_JOB };
/** The unique index that holds one payout per owner and reference (with the wallet transaction's, a taken reference). */
const PAYOUT_REFERENCE_CONSTRAINT = 'payouts_owner_reference_key';
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

/**
 * Withdrawals to bank accounts (lifecycle PAYOUT): one commit claims the key, holds amount + fee,
 * records the payout and its events; the provider is called outside any transaction; one commit
 * settles (capture on success, release on a refusal) and answers the key. No clear answer leaves
 * it processing for reconciliation, never a guess.
 */
export class PayoutService {
  private readonly clockFor: ClockFor;
  /** The two commits around the provider call (money/held-operation.ts). */
  readonly held: HeldOperation<PayoutRow, TransferState>;
  /** One wallet's reads before its opens, two at a time in this process (wallet-turns.ts). */
  private readonly turns = new WalletTurns();

  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    readonly idempotency: Idempotency,
    private readonly providerFor: (environment: Environment) => PaymentsProvider,
    private readonly coolingOff: CoolingOffPolicy = { periodMs: 0, capKobo: 0n },
    private readonly controls?: PayoutControls,
    private readonly bulkheads: Bulkheads = UNBOUNDED_BULKHEADS,
  ) {
    this.clockFor = clockLookup(clock);
    this.held = new HeldOperation(db, idempotency, this.clockFor, PAYOUT_HELD, HELD_WALLET);
  }

  banks(principal: Principal) {
    return this.providerFor(principal.environment).banks();
  }

  async resolveAccount(principal: Principal, input: { bankCode: string; accountNumber: string }) {
    const { accountNumber, bankCode } = checkFields(resolveAccountFieldChecks(input));
    const accountName = await this.providerFor(principal.environment).resolveAccount({ bankCode, accountNumber });
    return { bankCode, accountNumber, accountName };
  }

  async get(principal: Principal, reference: string): Promise<PayoutRow> {
    const row = await payoutStore.findByReference(this.db, principal, reference);
    if (!row) throw notFound(`Payout ${JSON.stringify(reference)}`);
    return row;
  }

  async withdraw(principal: Principal, input: WithdrawInput, idempotencyKey: string | undefined): Promise<PayoutRow> {
    const provider = this.providerFor(principal.environment);
    const { amount, reference, accountNumber, narration, bank } = await checkFieldsAwaiting({
      ...withdrawFieldChecks(input),
      bank: () => knownBank(provider, input.bankCode),
    });
    const request = { amount, bankCode: bank.code, accountNumber, narration };
    const accountName = await provider.resolveAccount({ bankCode: bank.code, accountNumber });
    const now = this.held.now(principal);
    // The hash covers what the caller sent: a generated reference would differ on every retry.
    const keyed = {
      scope: { userId: principal.userId, environment: principal.environment, operation: 'wallet.withdraw' },
      key: idempotencyKey,
      input: { ...request, reference: input.reference ?? null },
    };
    const payout = { ...request, reference, bank, accountName };
    // The held operation runs both commits and the provider call between them (money/held-operation.ts).
    return this.held.run({
      ...this.opening(principal, provider.name, payout, keyed, now),
      // A place in the provider's bulkhead is taken before anything is written: refused, this
      // answers 503 BUSY having held and recorded nothing. One wallet's commits take turns in its
      // group commit (money/group-commit.ts), waiting for which holds no connection. Between the
      // two commits no connection, transaction, lock or wallet turn is held while the provider
      // works; the place is given back as soon as it has answered.
      bulkhead: this.bulkheads.of(provider.name),
      send: (row) => sendTransfer(provider, row),
      // A retry after the first attempt's lease lapsed finishes it as the job would; reconcile
      // takes a place of its own (the held operation gives this one back first).
      resume: (row, key) => this.reconcile(row.id, key),
    });
  }

  /**
   * The first commit: the key claimed, the checks, the reconcile job, the hold, the payout and its
   * event, the PENDING wallet transaction. What concurrent payouts must take turns on is taken as
   * late as it can be, each lock lasting to the commit: the wallet's accounts (the hold), then the
   * destination's cooling-off lock, the wallet's transaction counts, and last the key's limits
   * lock, which before was taken first and so made one key's payouts take turns for the whole
   * transaction. What need not be in that turn is not: the Idempotency-Key is recorded with the
   * payout's id before the hold, and the limits' window is read in the statement that counts this
   * payout. Each statement left in the turn is paid once per payout by every later payout of the
   * wallet (200 at once: 200 turns one after another).
   */
  private opening(
    principal: Principal,
    providerName: string,
    payout: {
      amount: bigint;
      reference: string;
      bank: { code: string; name: string };
      accountNumber: string;
      accountName: string;
      narration: string | null;
    },
    keyed: { scope: IdempotencyScope; key: string | undefined; input: unknown },
    now: Date,
  ): KeyedOpen<PayoutRow> {
    const { amount, reference, bank, accountNumber, accountName, narration } = payout;
    // Named before the transaction, so the job written first can point at it and the key is
    // recorded with it before the hold (see below).
    const payoutId = randomUUID();
    // The payout as its open writes it, either way (its hold's id is the open's).
    const rowWith = (holdId: string): PayoutRow => ({
      id: payoutId,
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
      status: 'initiated',
      holdId,
      provider: providerName,
      providerRef: null,
      failureReason: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    const counterparty = { bankCode: bank.code, bankName: bank.name, accountNumber, accountName };
    return {
      owner: principal,
      reference,
      keyed,
      recordId: payoutId,
      // A reference taken between the check in the transaction and its insert: refused by name.
      referenceConstraints: [REFERENCE_CONSTRAINT, PAYOUT_REFERENCE_CONSTRAINT],
      // The request's path: the held operation's one statement (payout-writes.ts), the key claimed in it.
      statement: async (key, leaseUntil) => {
        // Read before the statement, outside its transaction: a reference taken (a holder
        // committing after this read meets the statement's unique index instead), and the limits
        // in force. Two of one wallet's payouts read at once (wallet-turns.ts): a burst's reads
        // would otherwise take every pooled connection at once.
        const [taken, limits] = await this.turns.run(walletKey(principal), () =>
          Promise.all([
            transactionStore.findByReference(this.db, principal, reference),
            this.controls?.limitsFor(this.db, principal, amount),
          ]),
        );
        // With a key the claim answers first (a retry of this very payout finishes it); a
        // reference taken otherwise meets the statement's unique index, refused by name too.
        if (taken && !key) throw referenceTaken(reference, taken.id);
        const destination = { bankCode: bank.code, accountNumber, amount };
        return openPayout(this.db, {
          principal,
          payout: rowWith(randomUUID()),
          transaction: {
            id: randomUUID(),
            userId: principal.userId,
            environment: principal.environment,
            type: 'WITHDRAWAL',
            status: 'PENDING',
            amount,
            fee: PAYOUT_FEE_KOBO,
            currency: 'NGN',
            reference,
            description: narration,
            counterparty,
            version: 1,
            createdAt: now,
            updatedAt: now,
          },
          key,
          leaseUntil,
          controls: this.controls,
          limits,
          reconcileAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
          clock: this.clockFor(principal),
          before: coolingOffApplies(this.coolingOff, principal)
            ? (tx) => checkPayoutDestination(tx, principal, destination, this.coolingOff, now)
            : undefined,
        });
      },
      // A key a dead request left running is taken over here.
      steps: async (tx) => {
        const taken = await transactionStore.findByReference(tx, principal, reference);
        if (taken) throw referenceTaken(reference, taken.id);
        const limits = await this.controls?.limitsFor(tx, principal, amount);
        // The safety net: if this process dies before the settling commit, reconciliation settles it.
        await enqueueJob(tx, {
          kind: PAYOUT_RECONCILE_JOB,
          payload: { payoutId },
          tenant: principal.userId,
          runAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
          clock: this.clockFor(principal),
        });
        // From here to the commit, concurrent payouts of this wallet take turns on its accounts'
        // rows, then on its wallet transactions' count rows (list_counts, by the insert's trigger):
        // the order every settle takes them in (money/settle-held.ts), so the two never deadlock.
        // The hold names the transaction it pays for, so the settle statement reaches it by id.
        const transactionId = randomUUID();
        const holdId = await this.held.hold(tx, principal, amount + PAYOUT_FEE_KOBO, reference, transactionId);
        // Before the payout is written: the cap counts the payouts already sent to the destination.
        await checkPayoutDestination(
          tx,
          principal,
          { bankCode: bank.code, accountNumber, amount },
          this.coolingOff,
          now,
        );
        const row = await insertOrConflict(reference, () => payoutStore.insert(tx, rowWith(holdId)));
        // payout.initiated is written with transaction.created, in one statement.
        const initiated = { type: 'payout.initiated', ...principal, data: { ...payoutEventData(row) } };
        await openPendingTransaction(
          tx,
          principal,
          {
            id: transactionId,
            type: 'WITHDRAWAL',
            amount,
            fee: PAYOUT_FEE_KOBO,
            reference,
            description: narration,
            counterparty,
          },
          now,
          [initiated],
        );
        if (limits) await this.controls!.count(tx, principal, limits, { amount, reference }, now);
        return row;
      },
    };
  }

  /**
   * Applies the provider's word on a payout once, in a transaction (PAYOUT_HELD says what it
   * does): success captures the hold (fee to fees), failure releases it; pending (or unknown)
   * moves it to processing and leaves it to reconciliation.
   */
  settle(payoutId: string, state: TransferState, key: KeyRef | null = null): Promise<PayoutRow> {
    return this.held.settleBySteps(payoutId, state, key);
  }

  /**
   * For the reconciliation job, and a retry taking over a key a failed request left (`key`,
   * answered with the outcome): asks the provider about a payout that is not settled.
   */
  async reconcile(payoutId: string, key: KeyRef | null = null): Promise<PayoutRow> {
    const payout = await this.byId(payoutId);
    if (payout.status === 'completed' || payout.status === 'failed') return this.held.answerAsItStands(key, payout);
    const provider = this.providerFor(payout.environment);
    // In the provider's bulkhead like a request's call (a refusal fails this run; the job retries).
    let state = await this.bulkheads.of(provider.name).run(async () => {
      const known = await provider.transferStatus(providerReference(payout));
      // The process died before the provider heard of it: send it now (the provider dedupes by reference).
      return known.status === 'not_found' && payout.status === 'initiated' ? sendTransfer(provider, payout) : known;
    });
    if (state.status === 'not_found') state = { providerRef: null, status: 'pending' };
    return this.settle(payout.id, state, key);
  }

  /** A payout by the reference the provider knows it by (see providerReference). */
  async byProviderReference(reference: string): Promise<PayoutRow | undefined> {
    const id = /^pgw-([0-9a-f-]{36})$/.exec(reference)?.[1];
    return id ? payoutStore.findById(this.db, id) : undefined;
  }

  async byId(id: string): Promise<PayoutRow> {
    const row = await payoutStore.findById(this.db, id);
    if (!row) throw notFound('Payout');
    return row;
  }
}

/** The wallet a payout's reads take turns on: its owner's, in its environment. */
const walletKey = (owner: { userId: string; environment: Environment }) => `${owner.environment}:${owner.userId}`;

/** The reference the provider knows a payout by: unique across users (the caller's is unique per user only). */
export const providerReference = (payout: { id: string }) => `pgw-${payout.id}`;

/** Sends a payout's transfer; a failure is classified (upstream/): only a refusal fails the payout. */
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
    const outcome = failureOutcome(error);
    return { providerRef: null, status: outcome.refused ? 'failed' : 'pending', reason: outcome.reason };
  }
}

/** A withdrawal's own rules for its fields, without a lookup: REST runs them beside its schema. */
export const withdrawFieldChecks = (input: Omit<WithdrawInput, 'bankCode'>) => ({
  amount: () => koboFrom(input.amount),
  reference: () => referenceFrom(input.reference, 'PAY'),
  accountNumber: () => checkAccountNumber(input.accountNumber),
  narration: () => optionalText(input.narration, 'narration', 100),
});

/** An account resolution's rules for its fields. */
export const resolveAccountFieldChecks = (input: { bankCode: string; accountNumber: string }) => ({
  accountNumber: () => checkAccountNumber(input.accountNumber),
  bankCode: () => requiredBankCode(input.bankCode),
});

const requiredBankCode = (given: string) =>
  requiredText(given, 'bankCode', 'bankCode is required; list the codes with the banks.');

async function knownBank(provider: PaymentsProvider, given: string) {
  const bankCode = requiredBankCode(given);
  const bank = (await provider.banks()).find((b) => b.code === bankCode);
  if (!bank)
    throw badInput(
      'bankCode',
      `bankCode ${JSON.stringify(bankCode)} is not a known bank; list the codes with the banks.`,
    );
  return bank;
}

function checkAccountNumber(value: string): string {
  const accountNumber = value.trim();
  if (!ACCOUNT_NUMBER.test(accountNumber))
    throw badInput('accountNumber', 'accountNumber must be a 10-digit NUBAN account number.');
  return accountNumber;
}
