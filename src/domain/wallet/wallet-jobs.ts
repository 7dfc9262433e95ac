import type { Clock } from '../clock.js';
import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { keepPolling } from '../jobs/polling.js';
import { DEPOSIT_JOBS, type DepositService } from './deposit-service.js';
import { PAYOUT_RECONCILE_JOB, type PayoutService } from './payout-service.js';

/** Settles a payout the request path left unsettled (a timeout, a crash) by asking the provider. */
export class PayoutReconcileHandler implements JobHandler {
  readonly kind = PAYOUT_RECONCILE_JOB;
  constructor(
    private readonly payouts: PayoutService,
    private readonly clock: Clock,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const payout = await this.payouts.reconcile(String(job.payload['payoutId']));
    const final = payout.status === 'completed' || payout.status === 'failed';
    return keepPolling(this.clock, {
      final,
      since: payout.createdAt,
      stuck: `Payout ${payout.id} is still ${payout.status} after 24 hours; check it with the provider.`,
    });
  }
}

/** Sandbox: the payer's transfer, USSD payment or checkout arrives. */
export class DepositSandboxArrivalHandler implements JobHandler {
  readonly kind = DEPOSIT_JOBS.sandboxArrival;
  constructor(private readonly deposits: DepositService) {}

  async run(job: Job): Promise<JobOutcome> {
    const deposit = await this.deposits.byId(String(job.payload['depositId']));
    if (deposit) await this.deposits.apply(deposit.id, { providerRef: deposit.providerRef ?? '', status: 'succeeded' });
    return { status: 'done' };
  }
}

export class DepositExpiryHandler implements JobHandler {
  readonly kind = DEPOSIT_JOBS.expire;
  constructor(private readonly deposits: DepositService) {}

  async run(job: Job): Promise<JobOutcome> {
    await this.deposits.expire(String(job.payload['depositId']));
    return { status: 'done' };
  }
}

/** Provider deposits still pending: poll the charge until it settles (or 24 hours pass). */
export class DepositReconcileHandler implements JobHandler {
  readonly kind = DEPOSIT_JOBS.reconcile;
  constructor(
    private readonly deposits: DepositService,
    private readonly clock: Clock,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const deposit = await this.deposits.reconcile(String(job.payload['depositId']));
    if (!deposit) return { status: 'done' };
    // An unpaid deposit that never settles simply lapses (its expiry fails it); nothing to flag.
    const outcome = keepPolling(this.clock, {
      final: deposit.status === 'completed' || deposit.status === 'failed',
      since: deposit.createdAt,
      stuck: '',
    });
    return outcome.status === 'failed' ? { status: 'done' } : outcome;
  }
}

export function walletJobHandlers(deposits: DepositService, payouts: PayoutService, clock: Clock): JobHandler[] {
  return [
    new PayoutReconcileHandler(payouts, clock),
    new DepositSandboxArrivalHandler(deposits),
    new DepositExpiryHandler(deposits),
    new DepositReconcileHandler(deposits, clock),
  ];
}
