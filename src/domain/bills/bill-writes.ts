import type { Database } from '../../db/client.js';
import { billRecords } from '../../db/bills-schema.js';
import { walletTransactions } from '../../db/wallet-schema.js';
import { runStatement } from '../../db/plain-sql.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { holdsOf, ledger, walletOf } from '../ledger/ledger.js';
import { heldOpened, heldOpenRun, heldOpenStatement, rowJson } from '../money/held-open.js';
import type { StatementOpened } from '../money/held-operation.js';
import type { KeyRef } from '../money/key-claim.js';
import { rowMapper } from '../money/plain-write.js';
import type { WalletTransactionRow } from '../wallet/transaction-store.js';
import { pendingTransactionEvent, pendingTransactionRow } from '../wallet/wallet-events.js';
import type { ResolvedPayment } from './bill-catalogue.js';
import { billTransaction, pendingBillRow } from './bill-rows.js';
import { BILL_STATUS_POLL_JOB } from './bill-lifecycle.js';
import type { BillRecordRow } from './bill-record.js';

/**
 * A bill payment's first commit as the held operation's one statement (money/held-open.ts),
 * generated from the bill's shape: its table, the wallet transaction's and its status-poll job.
 * The key's claim, the hold's placement with its posting, the record, the PENDING wallet
 * transaction with `transaction.created`, the job and the key left `running` with the record are
 * the held operation's, written once there; the rows are the ones the steps write (bill-rows.ts).
 *
 * The settle after the provider call is the held operation's too (money/settle-held.ts), its one
 * statement generated from BILL_HELD (bill-lifecycle.ts).
 */
const OPEN = heldOpenStatement({
  kind: 'bill',
  record: billRecords,
  transaction: walletTransactions,
  job: BILL_STATUS_POLL_JOB,
});

/**
 * The unique index that holds one bill per owner and reference. With the wallet transaction's
 * (`REFERENCE_CONSTRAINT`), the only unique indexes a bill's open statement can meet that mean
 * "this reference is taken"; any other violation is a fault, not the caller's conflict.
 */
export const BILL_REFERENCE_CONSTRAINT = 'bill_records_owner_reference_key';

const recordOf = rowMapper<BillRecordRow>(billRecords);

export interface BillOpen {
  owner: { userId: string; environment: Environment };
  /** The PENDING record and its wallet transaction as they are to be written (bill-rows.ts). */
  record: BillRecordRow;
  transaction: WalletTransactionRow;
  key: KeyRef | null;
  leaseUntil: Date;
  /** When the status poll first asks, on the account's clock. */
  pollAt: Date;
  clock?: Clock | undefined;
}

export type BillOpened = StatementOpened<BillRecordRow>;

/** Runs the bill's open: see the file. Nothing is written unless the key is claimed and the money held. */
export async function openBill(db: Database, w: BillOpen): Promise<BillOpened> {
  const { owner, record, transaction } = w;
  const wallet = await ledger.cachedAccountId(db, walletOf(owner.environment, owner.userId));
  const holds = await ledger.cachedAccountId(db, holdsOf(owner.environment, owner.userId));
  const { st, values } = heldOpenRun(OPEN, {
    owner,
    reference: record.reference,
    key: w.key,
    leaseUntil: w.leaseUntil,
    at: record.createdAt,
    hold: { id: record.holdId!, amount: record.amount + record.fee, wallet, holds },
    record: { id: record.id, json: rowJson(billRecords, record) },
    transaction: { id: transaction.id, json: rowJson(walletTransactions, transaction) },
    job: { payload: { recordId: record.id }, runAt: w.pollAt, clock: w.clock },
    events: [pendingTransactionEvent(transaction)],
  });
  const [raw] = await runStatement(db, st, values);
  return heldOpened(raw!, recordOf) ?? { insufficient: true };
}

/**
 * The bill's open as the held operation is given it (its `statement`): the rows built
 * (bill-rows.ts) and opened in one statement under the key the held operation claims.
 */
export const billOpenStatement =
  (
    db: Database,
    w: {
      owner: { userId: string; environment: Environment };
      payment: ResolvedPayment;
      reference: string;
      provider: string;
      now: Date;
      pollAt: Date;
      clock?: Clock | undefined;
    },
  ) =>
  (key: KeyRef | null, leaseUntil: Date): Promise<BillOpened> => {
    const record = pendingBillRow(w.owner, w.payment, w.reference, w.provider, w.now, { holdId: crypto.randomUUID() });
    return openBill(db, {
      owner: w.owner,
      record,
      transaction: pendingTransactionRow(record, billTransaction(record, crypto.randomUUID()), w.now),
      pollAt: w.pollAt,
      leaseUntil,
      key,
      clock: w.clock,
    });
  };
