import type { PendingTransaction } from './wallet-events.js';
import type { DepositRow } from './deposit-store.js';

/**
 * What a deposit writes when it opens, as rows: built once here and written either way (the one
 * statement inserts them column by column, the steps through the store), so the two ways cannot
 * drift apart on what a new deposit says.
 */

/** What the service decides of a new deposit; the rest of its row is the same for every one. */
export type NewDeposit = Pick<
  DepositRow,
  | 'id'
  | 'userId'
  | 'environment'
  | 'reference'
  | 'method'
  | 'paymentMethodId'
  | 'amount'
  | 'currency'
  | 'provider'
  | 'redirectUrl'
  | 'narration'
  | 'meta'
  | 'customer'
>;

/** A new `initiated` deposit, every column set, naming the wallet transaction it opens. */
export function initiatedDeposit(d: NewDeposit, transactionId: string, at: Date): DepositRow {
  return {
    ...d,
    status: 'initiated',
    providerRef: null,
    nextAction: null,
    accountNumber: null,
    bankName: null,
    accountName: null,
    expiresAt: null,
    failureReason: null,
    transactionId,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
}

/** The PENDING wallet transaction a deposit opens (its id is the deposit's `transaction_id`). */
export const depositTransaction = (deposit: DepositRow): PendingTransaction => ({
  id: deposit.transactionId!,
  type: 'DEPOSIT',
  amount: deposit.amount,
  reference: deposit.reference,
  description: deposit.narration,
  counterparty: { method: deposit.method },
});
