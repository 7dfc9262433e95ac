import type { Database, Executor } from '../../db/client.js';
import { payouts, walletTransactions } from '../../db/wallet-schema.js';
import { runIn } from '../../db/plain-sql.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { holdsOf, ledger, walletOf } from '../ledger/ledger.js';
import { groupCommitOf } from '../money/group-commit.js';
import { heldOpened, heldOpenRun, heldOpenStatement, rowJson } from '../money/held-open.js';
import type { StatementOpened } from '../money/keyed-open.js';
import type { KeyRef } from '../money/key-claim.js';
import { rowMapper } from '../money/plain-write.js';
import { PAYOUT_WINDOW_GATE, type PayoutControls, type PayoutLimits, windowValues } from '../payouts/payout-limits.js';
import { PAYOUT_RECONCILE_JOB, payoutEventData } from './payout-lifecycle.js';
import type { PayoutRow } from './payout-store.js';
import { transactionEventData } from './transaction-lifecycle.js';
import type { WalletTransactionRow } from './transaction-store.js';

/**
 * A payout's first commit as the held operation's one statement (money/held-open.ts), generated
 * from the payout's shape: its table, the wallet transaction's, its reconcile job, and its limits
 * as the open's gate (payouts/payout-limits.ts). What one wallet's payouts take turns on (its
 * accounts' rows, from the hold to the commit) is then one statement's work, not a transaction
 * of statements, each a round trip every later payout of the wallet waits for.
 *
 * It runs in the wallet's group commit (money/group-commit.ts): while one of the wallet's writes
 * is in flight, the payouts arriving meanwhile open together in one transaction, each its own
 * statement (its own key, balance check and limits window, seeing the ones before it), one flush
 * for all of them. A limit per window needs the window read after the credential's lock is
 * granted: the lock is taken first in the transaction. A destination cooling off has a check and
 * lock of its own: that payout opens in a transaction of its own, the check first.
 */
const OPEN = heldOpenStatement({
  kind: 'payout',
  record: payouts,
  transaction: walletTransactions,
  job: PAYOUT_RECONCILE_JOB,
  gate: PAYOUT_WINDOW_GATE,
});

const payoutOf = rowMapper<PayoutRow>(payouts);

export interface PayoutOpen {
  principal: Principal;
  /** The payout and its PENDING wallet transaction as they are to be written. */
  payout: PayoutRow;
  transaction: WalletTransactionRow;
  key: KeyRef | null;
  leaseUntil: Date;
  controls: PayoutControls | undefined;
  limits: PayoutLimits | undefined;
  /** When reconciliation first looks, on the account's clock. */
  reconcileAt: Date;
  clock: Clock;
  /** Checks with locks of their own, run first in the transaction (the destination's cooling-off); each may refuse. */
  before?: ((tx: Executor) => Promise<void>) | undefined;
}

/** Runs the payout's open: see the file. A window found full is refused (thrown), nothing written. */
export async function openPayout(db: Database, w: PayoutOpen): Promise<StatementOpened<PayoutRow>> {
  const { principal, payout, transaction, limits, controls } = w;
  const wallet = await ledger.cachedAccountId(db, walletOf(principal.environment, principal.userId));
  const holds = await ledger.cachedAccountId(db, holdsOf(principal.environment, principal.userId));
  const { st, values } = heldOpenRun(OPEN, {
    owner: principal,
    reference: payout.reference,
    key: w.key,
    leaseUntil: w.leaseUntil,
    at: payout.createdAt,
    hold: { id: payout.holdId, amount: payout.amount + payout.fee, wallet, holds },
    record: { id: payout.id, json: rowJson(payouts, payout) },
    transaction: { id: transaction.id, json: rowJson(walletTransactions, transaction) },
    job: { payload: { payoutId: payout.id }, runAt: w.reconcileAt, clock: w.clock },
    // payout.initiated with transaction.created, as the steps write them.
    events: [
      { type: 'payout.initiated', data: payoutEventData(payout) },
      { type: 'transaction.created', data: transactionEventData(transaction) },
    ],
    gate: windowValues(principal, limits, payout, payout.createdAt),
  });
  const windowed = limits !== undefined && controls!.windowed(limits);
  const raw = w.before
    ? // Its own transaction: the destination's check and lock first, then the credential's.
      await db.transaction(async (tx) => {
        await w.before!(tx);
        if (windowed) await controls!.lockWindow(tx, principal);
        return (await runIn(tx, st, values))[0]!;
      })
    : // In the wallet's group commit: one wallet's payouts arriving together open together.
      await groupCommitOf(db).run(wallet, {
        st,
        values,
        accounts: [wallet, holds],
        locks: windowed ? [controls!.windowLock(principal)] : [],
        read: (row) => row,
      });
  const opened = heldOpened(raw, payoutOf);
  if (opened) return opened;
  if (raw['window_full']) throw await controls!.refusal(db, principal, limits!, payout, payout.createdAt);
  return { insufficient: true };
}
