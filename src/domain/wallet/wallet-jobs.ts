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

/**
 * Deposits not final: a deposit its request left `initiated` is finished (retried until it is);
 * a pending charge of a provider that may lose its webhooks is polled until it settles (or 24
 * hours pass). A pending deposit of a provider that settles by itself is looked at once.
 */
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
    const final = deposit.status === 'completed' || deposit.status === 'failed';
    const outcome = keepPolling(this.clock, {
      final: final || (deposit.status === 'pending' && !this.deposits.isPolled(deposit)),
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
