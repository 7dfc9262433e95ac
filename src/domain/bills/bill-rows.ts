import type { Environment } from '../auth/permissions.js';
import type { PendingTransaction } from '../wallet/wallet-events.js';
import type { ResolvedPayment } from './bill-catalogue.js';
import type { BillRecordRow } from './bill-record.js';

/**
 * What a bill writes when it opens, as rows: built once here and written either way (the held
 * operation's one statement inserts them column by column, the steps through the store), so the
 * two ways cannot drift apart on what a new bill says.
 */

/** A new PENDING bill record, every column set. */
export function pendingBillRow(
  owner: { userId: string; environment: Environment },
  payment: ResolvedPayment,
  reference: string,
  provider: string,
  now: Date,
  links: { holdId?: string; scheduleId?: string; metadata?: Record<string, unknown> },
): BillRecordRow {
  return {
    id: crypto.randomUUID(),
    userId: owner.userId,
    environment: owner.environment,
    reference,
    billerCode: payment.billerCode,
    itemCode: payment.itemCode,
    customer: payment.customer,
    amount: BigInt(payment.amount),
    fee: BigInt(payment.fee),
    type: payment.type,
    status: 'PENDING',
    providerData: null,
    txRef: null,
    billerName: payment.billerName,
    customerName: payment.customerName,
    validityPeriod: payment.validityPeriod,
    metadata: links.metadata ? JSON.stringify(links.metadata) : null,
    token: null,
    units: null,
    holdId: links.holdId ?? null,
    provider,
    scheduleId: links.scheduleId ?? null,
    failureReason: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
    deletedDate: null,
  };
}

/** The PENDING wallet transaction a held bill pays for (its id is the hold's `transaction_id`). */
export const billTransaction = (record: BillRecordRow, id: string): PendingTransaction => ({
  id,
  type: 'BILL',
  amount: record.amount,
  fee: record.fee,
  reference: record.reference,
  description: `${record.billerName} for ${record.customer}`,
  counterparty: { billerCode: record.billerCode, billerName: record.billerName, customer: record.customer },
});
