import type { Database, Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import { type Clock, type ClockFor, clockLookup, wallTimeOf } from '../clock.js';
import { enqueueJob, type Job, type JobHandler, type JobOutcome } from '../jobs/job-runner.js';
import { ledger } from '../ledger/ledger.js';

/**
 * Holds: money reserved from a wallet for an operation whose outcome comes later (a payout, a bill,
 * an offramp order). The contract every operation builds on:
 *
 * - `placeHold(tx, …)` in the operation's first transaction: the wallet is debited into the user's
 *   holds account (refused with INSUFFICIENT_FUNDS, rolling the transaction back, when it would
 *   overdraw). With `expiresAt`, a `hold.expire` job is queued in the same transaction, due then.
 * - `captureHold` (the money leaves: fee to fees, the rest to provider clearing) or `releaseHold`
 *   (the money returns to the wallet), in the transaction that settles the operation. Each happens
 *   at most once per hold, and only one of them: a guarded UPDATE on the hold's status decides, so
 *   a capture racing an expiry either captures (the expiry then does nothing) or finds it released.
 *   Both return false, changing nothing, when the hold was already settled.
 * - Expiry: the job releases a hold still `held` at its due time, and fails the wallet transaction
 *   it pays for (`transactionId`), with that transaction's `transaction.failed` event, in one
 *   transaction fenced by the job's lease. A hold settled meanwhile is left alone. The wallet owns
 *   that transaction, so the wallet supplies the write that fails it (`FailHeldTransaction`,
 *   wallet/wallet-transitions.ts `failExpiredHoldTransaction`): money/ imports no domain.
 */
export interface NewHold {
  environment: Environment;
  userId: string;
  amount: bigint;
  /** The operation's reference, for the ledger's descriptions. */
  reference: string;
  /** When an uncaptured hold gives the money back by itself. */
  expiresAt?: Date;
  /** The PENDING wallet transaction this hold pays for; it fails when the hold expires. */
  transactionId?: string;
  /** The account's clock `expiresAt` was read from (a sandbox test clock's expiry job is the clock's). */
  clock?: Clock;
}

export const HOLD_EXPIRE_JOB = 'hold.expire';

/** Reserves the amount; returns the hold's id. */
export async function placeHold(tx: Executor, hold: NewHold): Promise<string> {
  const id = await ledger.hold(tx, hold, hold.amount, hold.reference, {
    expiresAt: hold.expiresAt,
    transactionId: hold.transactionId,
  });
  if (hold.expiresAt)
    await enqueueJob(tx, {
      kind: HOLD_EXPIRE_JOB,
      // The environment names the account whose clock the expiry is read on (HoldExpiryHandler).
      payload: { holdId: id, environment: hold.environment },
      runAt: hold.expiresAt,
      tenant: hold.userId,
      clock: hold.clock,
    });
  return id;
}

/** Spends a hold, at most once: `fee` to fees, the rest to provider clearing. False if already settled. */
export const captureHold = (tx: Executor, holdId: string, fee: bigint, at: Date) => ledger.capture(tx, holdId, fee, at);

/** Gives a hold back to the wallet, at most once. False if already settled. */
export const releaseHold = (tx: Executor, holdId: string, at: Date) => ledger.release(tx, holdId, at);

/**
 * Fails the PENDING wallet transaction an expired hold paid for, with its event, in the release's
 * transaction; nothing when it is no longer pending.
 */
export type FailHeldTransaction = (tx: Executor, transactionId: string, at: Date) => Promise<void>;

/**
 * Releases a hold whose expiry has passed, if it is still held, and fails the wallet transaction it
 * pays for with its event. Returns whether it released anything.
 */
export async function releaseExpiredHold(
  tx: Executor,
  holdId: string,
  now: Date,
  failTransaction: FailHeldTransaction,
): Promise<boolean> {
  const released = await ledger.releaseHold(tx, holdId, now, { expiredBy: now });
  if (!released) return false;
  if (released.transactionId) await failTransaction(tx, released.transactionId, now);
  return true;
}

/** The money lane's job: one per hold with an expiry, due at that expiry. */
export class HoldExpiryHandler implements JobHandler {
  readonly kind = HOLD_EXPIRE_JOB;
  private readonly clockFor: ClockFor;
  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    private readonly failTransaction: FailHeldTransaction,
  ) {
    this.clockFor = clockLookup(clock);
  }

  async run(job: Job): Promise<JobOutcome> {
    // The hold's expiry was read on its account's clock (a sandbox test clock's, when attached), so
    // it is compared with that clock's time; the job's due time is stored in wall time.
    const clock = this.clockFor({ userId: job.tenant, environment: environmentOf(job) });
    const now = clock.now();
    if (job.runAt > wallTimeOf(clock, now)) return { status: 'retry', at: job.runAt };
    // Run by the job runner, `db` is this claim's fenced handle (database-binding.ts): the
    // transaction's BEGIN checks the lease, so a worker that lost it releases nothing.
    await this.db.transaction((tx) => releaseExpiredHold(tx, String(job.payload['holdId']), now, this.failTransaction));
    return { status: 'done' };
  }
}

/**
 * The hold's environment: in the payload since it names it; a job written before then is a
 * sandbox account's when its due time was read from a test clock, and otherwise is timed on the
 * process clock, which any production account reads.
 */
function environmentOf(job: Job): string {
  const named = job.payload['environment'];
  if (typeof named === 'string') return named;
  return job.testClockId ? 'sandbox' : 'production';
}
