import type { Database } from '../../db/client.js';
import { REFERENCE_CONSTRAINT, violatedConstraint } from '../money/plain-write.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Window } from '../../domain/keyset.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { checkFields, optionalText, requiredText } from '../field-checks.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { isUuid } from '../ids.js';
import { checkPage, paged } from '../pagination.js';
import { insufficientFunds, ledger, walletOf } from '../ledger/ledger.js';
import { claimOf, dropLapsedKey, keyBusy, retryOnKeyRace } from '../money/key-claim.js';
import { referenceFrom, referenceTaken } from '../money/reference.js';
import { replay, toStorable } from '../idempotency/idempotency.js';
import { TRANSFER_OPERATION, type TransferOutcome, type TransferWrite, writeTransfer } from './transfer-store.js';
import type { UserService } from '../users/user-service.js';
import { koboFrom } from './naira.js';
import { type TransactionFilter, transactionStore, type WalletTransactionRow } from './transaction-store.js';

export interface TransferInput {
  amount: unknown;
  /** The recipient's user id or email. */
  recipient: string;
  reference?: string | null;
  narration?: string | null;
}

export const MAX_TRANSACTIONS_PAGE = 100;

function checkTransactionFilter(filter: TransactionFilter): void {
  if (filter.from && filter.to && filter.from >= filter.to) throw badInput('to', 'to must be after from.');
  if (filter.minAmount !== undefined && filter.maxAmount !== undefined && filter.minAmount > filter.maxAmount)
    throw badInput('maxAmount', 'maxAmount must not be below minAmount.');
}

/** The NGN wallet: balances, ledger history, transactions and instant transfers between users. */
export class WalletService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly users: UserService,
    private readonly idempotency: Idempotency,
  ) {}

  async balance(principal: Principal) {
    const { available, held } = await ledger.balances(this.db, principal.environment, principal.userId);
    return { currency: 'NGN', available, held, total: available + held };
  }

  async ledgerEntries(principal: Principal, limit: number, before?: Date) {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TRANSACTIONS_PAGE)
      throw badInput('limit', `limit must be 1 to ${MAX_TRANSACTIONS_PAGE}.`);
    return ledger.walletEntries(readsOf(this.db), principal.environment, principal.userId, limit, before);
  }

  async transactions(principal: Principal, filter: TransactionFilter, page = 1, limit = 20) {
    checkPage(page, limit, MAX_TRANSACTIONS_PAGE);
    checkTransactionFilter(filter);
    const { rows, total } = await transactionStore.page(readsOf(this.db), principal, filter, page, limit);
    return paged('transactions', rows, total, page, limit);
  }

  /** The same list as `transactions`, as a cursor window (the window's size was checked by its parser). */
  async transactionWindow(principal: Principal, filter: TransactionFilter, window: Window) {
    checkTransactionFilter(filter);
    return {
      page: await transactionStore.window(readsOf(this.db), principal, filter, window),
      countAll: () => transactionStore.count(readsOf(this.db), principal, filter),
    };
  }

  async transaction(principal: Principal, id: string): Promise<WalletTransactionRow> {
    const row = isUuid(id) ? await transactionStore.findById(this.db, principal, id) : undefined;
    if (!row) throw notFound('Transaction');
    return row;
  }

  async transactionByReference(principal: Principal, reference: string): Promise<WalletTransactionRow> {
    const row = await transactionStore.findByReference(this.db, principal, reference);
    if (!row) throw notFound(`Transaction ${JSON.stringify(reference)}`);
    return row;
  }

  /**
   * Moves money to another user of the same environment at once: both sides or neither. The
   * recipient's transaction carries the same reference with an `:in` suffix, or, when the recipient
   * already has that (another sender used the same reference with them), `:in:<sender's user id>`,
   * unique since the sender's reference is. One statement, so one commit: see transfer-store.ts.
   */
  async transfer(
    principal: Principal,
    input: TransferInput,
    idempotencyKey: string | undefined,
  ): Promise<WalletTransactionRow> {
    const { amount, reference, narration, recipientKey } = checkFields(transferFieldChecks(input));
    const scope = { userId: principal.userId, environment: principal.environment, operation: TRANSFER_OPERATION };
    const key = this.idempotency.keyRef(scope, idempotencyKey, {
      amount,
      reference: input.reference ?? null,
      recipient: recipientKey,
      narration,
    });
    const recipient = isUuid(recipientKey)
      ? (await this.users.usersByIds([recipientKey]))[0]
      : await this.users.userByEmail(recipientKey.toLowerCase());
    if (!recipient)
      return this.idempotency.refuse(
        key,
        new DomainError('NOT_FOUND', `recipient ${JSON.stringify(recipientKey)} is not a user of this gateway.`, {
          field: 'recipient',
        }),
      );
    if (recipient.id === principal.userId)
      return this.idempotency.refuse(
        key,
        badInput('recipient', 'recipient must be another user; a transfer to yourself moves nothing.'),
      );
    let write: TransferWrite = {
      environment: principal.environment,
      senderId: principal.userId,
      recipient: { id: recipient.id, email: recipient.email },
      senderAccountId: await ledger.cachedAccountId(this.db, walletOf(principal.environment, principal.userId)),
      recipientAccountId: await ledger.cachedAccountId(this.db, walletOf(principal.environment, recipient.id)),
      amount,
      reference,
      narration,
      at: this.clock.now(),
      ...(key ? { key: { key: key.key, requestHash: key.requestHash } } : {}),
    };
    // The recipient's suffix and a resumed key each at most once; each pass of the loop may meet a
    // twin's key once more (retryOnKeyRace), so at most three passes and three such retries.
    let keyResumed = false;
    for (;;) {
      let outcome: TransferOutcome;
      try {
        const attempt = write;
        outcome = await retryOnKeyRace(() => writeTransfer(this.db, attempt, (row) => ({ result: toStorable(row) })));
      } catch (error) {
        if (violatedConstraint(error) === REFERENCE_CONSTRAINT) {
          const holder = await transactionStore.findByReference(this.db, principal, reference);
          // The sender's reference is free, so the recipient's side met `<reference>:in` (another
          // sender's transfer with the same reference): written under the sender's own suffix.
          if (!holder && write.recipientReference === undefined) {
            write = { ...write, recipientReference: `${reference}:in:${principal.userId}` };
            continue;
          }
          if (holder) return this.idempotency.refuse(key, referenceTaken(reference, holder.id));
          // Both the recipient's `:in` and the sender's suffix of it are taken (by the recipient's
          // own transactions): the sender's reference is free, but not with this recipient.
          return this.idempotency.refuse(
            key,
            new DomainError(
              'CONFLICT',
              `reference ${JSON.stringify(reference)} cannot be used with this recipient: their transactions already carry it. Use a new reference.`,
              { field: 'reference' },
            ),
          );
        }
        throw error;
      }
      if ('done' in outcome) return outcome.done;
      if ('insufficient' in outcome) return this.idempotency.refuse(key, insufficientFunds());
      const claim = claimOf(outcome.claim, key!.requestHash);
      if ('replay' in claim) return replay<WalletTransactionRow>(claim.replay);
      // A key a dead process left running (its lease lapsed, nothing recorded): claim it afresh.
      if ('resume' in claim && !keyResumed && (await dropLapsedKey(this.db, key!, this.clock.now()))) {
        keyResumed = true;
        continue;
      }
      throw keyBusy();
    }
  }
}

/** A transfer's own rules for its fields: the service runs them, and REST beside its schema. */
export const transferFieldChecks = (input: TransferInput) => ({
  amount: () => koboFrom(input.amount),
  reference: () => referenceFrom(input.reference, 'TRF'),
  narration: () => optionalText(input.narration, 'narration', 140),
  recipientKey: () => requiredText(input.recipient, 'recipient', 'recipient is required: a user id or email.'),
});
