import type { Executor } from '../../db/client.js';
import type { billRecords } from '../../db/bills-schema.js';
import { recordEvent } from '../events/outbox.js';
import { nairaNumber } from '../wallet/naira.js';

export type BillRecordRow = typeof billRecords.$inferSelect;

/** `bill.payment.successful` / `bill.payment.failed` with the seed's bill `data`. */
export async function recordBillEvent(tx: Executor, row: BillRecordRow, at: Date): Promise<void> {
  if (row.status === 'PENDING') return;
  await recordEvent(
    tx,
    {
      type: row.status === 'SUCCESS' ? 'bill.payment.successful' : 'bill.payment.failed',
      userId: row.userId,
      environment: row.environment,
      data: {
        reference: row.reference,
        status: row.status,
        amount: nairaNumber(row.amount),
        currency: 'NGN',
        billerName: row.billerName,
        customerName: row.customerName,
        customerId: row.customer,
        version: row.version,
        updatedAt: row.updatedAt.toISOString(),
      },
    },
    at,
  );
}
