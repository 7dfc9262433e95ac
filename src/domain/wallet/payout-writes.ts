import type { Database } from '../../db/client.js';
import { PAYOUT, payoutEventData } from './payout-lifecycle.js';
import type { KeyRef } from '../money/key-claim.js';
import { type HeldSettle, settleHeld, settleHeldStatement } from '../money/settle-held.js';
import type { PayoutRow } from './payout-store.js';
import { transactionSettleEvent, transactionSettles } from './transaction-lifecycle.js';

/** A payout's settling write as one statement (money/settle-held.ts): capture or release, the move, events, the key. */
const SETTLE = settleHeldStatement({
  name: 'payout_settle_v7',
  table: 'payouts',
  kind: PAYOUT.kind,
  statusType: 'payout_status',
  set: 'provider_ref = $27::text, failure_reason = $28::text',
});

type Final = 'completed' | 'failed';

/** Whether the statement writes this move (listed in PAYOUT's table with one event, and TRANSACTION's). */
export const settlesInOneStatement = (payout: PayoutRow, to: Final) =>
  (payout.status === 'initiated' || payout.status === 'processing') &&
  PAYOUT.moves[payout.status][to]?.length === 1 &&
  transactionSettles(to === 'completed' ? 'COMPLETED' : 'FAILED');

/** The settled payout, or undefined when it moved or changed meanwhile (then nothing was written). */
export async function settlePayout(
  db: Database,
  w: {
    payout: PayoutRow;
    to: Final;
    changes: Pick<PayoutRow, 'providerRef' | 'failureReason'>;
    at: Date;
    accounts: HeldSettle['accounts'];
    key: KeyRef | null;
  },
): Promise<PayoutRow | undefined> {
  const { payout } = w;
  const settled: PayoutRow = { ...payout, ...w.changes, status: w.to, version: payout.version + 1, updatedAt: w.at };
  const moved = await settleHeld(db, SETTLE, {
    id: payout.id,
    userId: payout.userId,
    environment: payout.environment,
    reference: payout.reference,
    version: payout.version,
    from: payout.status,
    to: w.to,
    event: PAYOUT.moves[payout.status][w.to]![0]!,
    eventData: payoutEventData(settled),
    settled,
    holdId: payout.holdId,
    capture: w.to === 'completed',
    transactionEvent: transactionSettleEvent(w.to === 'completed' ? 'COMPLETED' : 'FAILED')!,
    fee: payout.fee,
    accounts: w.accounts,
    at: w.at,
    key: w.key,
    extra: [settled.providerRef, settled.failureReason],
  });
  return moved ? settled : undefined;
}
