import { enqueueJob, type Job, type JobHandler, type JobOutcome } from '../jobs/job-runner.js';
import { keepPolling } from '../jobs/polling.js';
import { isFinal, type OfframpStatus } from './catalogue.js';
import { SANDBOX_OFFRAMP } from './sandbox-offramp-provider.js';
import { OFFRAMP_JOBS, type OfframpService, SANDBOX_STEP_SECONDS } from './offramp-service.js';
import type { OfframpOrderRow } from './offramp-order.js';

const orderIdOf = (job: Job) => String(job.payload['orderId']);

/**
 * The sandbox lifecycle after a deposit: each step one job, SANDBOX_STEP_SECONDS apart (the event
 * trigger takes the same steps at once).
 */
export function nextSandboxStep(order: OfframpOrderRow): { status: OfframpStatus; reason?: string } | undefined {
  switch (order.status) {
    case 'deposit_received':
      return { status: 'processing' };
    case 'processing':
      return order.accountNumber === SANDBOX_OFFRAMP.failingPayoutAccount
        ? {
            status: 'refunded',
            reason: 'The recipient bank rejected the payout; the deposit was returned to the refund address.',
          }
        : { status: 'fiat_sent' };
    case 'fiat_sent':
      return { status: 'completed' };
    default:
      return undefined;
  }
}

export class OfframpSandboxStepHandler implements JobHandler {
  readonly kind = OFFRAMP_JOBS.sandboxStep;
  constructor(private readonly offramp: OfframpService) {}

  async run(job: Job): Promise<JobOutcome> {
    const order = await this.offramp.findOrder(orderIdOf(job));
    const next = order && nextSandboxStep(order);
    if (!order || !next) return { status: 'done' };
    await this.offramp.move(order.id, next, async (tx, moved) => {
      if (!isFinal(moved.status)) {
        // The next step on the order's account's clock, so a test clock's advance walks it.
        const clock = this.offramp.clockOf(moved);
        await enqueueJob(tx, {
          kind: this.kind,
          payload: { orderId: moved.id },
          tenant: moved.userId,
          runAt: new Date(clock.now().getTime() + SANDBOX_STEP_SECONDS * 1000),
          clock,
        });
      }
    });
    return { status: 'done' };
  }
}

export class OfframpExpiryHandler implements JobHandler {
  readonly kind = OFFRAMP_JOBS.expire;
  constructor(private readonly offramp: OfframpService) {}

  async run(job: Job): Promise<JobOutcome> {
    // Only an order still waiting for its deposit expires; anything further along is left alone.
    await this.offramp.move(orderIdOf(job), { status: 'expired', reason: 'No deposit arrived before validUntil.' });
    return { status: 'done' };
  }
}

export class OfframpReconcileHandler implements JobHandler {
  readonly kind = OFFRAMP_JOBS.reconcile;
  constructor(private readonly offramp: OfframpService) {}

  async run(job: Job): Promise<JobOutcome> {
    const order = await this.offramp.findOrder(orderIdOf(job));
    if (!order || isFinal(order.status)) return { status: 'done' };
    const provider = this.offramp.providerFor(order.environment);
    const state = await provider.orderState!(order.providerOrderId);
    const { row } = await this.offramp.move(order.id, state);
    return keepPolling(this.offramp.clockOf(order), {
      final: isFinal(row.status),
      since: order.createdAt,
      stuck: `Offramp order ${order.id} is still ${row.status} after 24 hours; check it with the provider.`,
    });
  }
}

export function offrampJobHandlers(offramp: OfframpService): JobHandler[] {
  return [
    new OfframpSandboxStepHandler(offramp),
    new OfframpExpiryHandler(offramp),
    new OfframpReconcileHandler(offramp),
  ];
}
