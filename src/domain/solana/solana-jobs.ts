import type { Clock } from '../clock.js';
import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { CONFIRM_EVERY_MS, CONFIRM_JOB, type SolanaTransfers } from './transfer-service.js';

/** Follows an outgoing Solana transaction until it is final: asks the chain, re-broadcasts, expires. */
export class SolanaConfirmHandler implements JobHandler {
  readonly kind = CONFIRM_JOB;
  constructor(
    private readonly transfers: SolanaTransfers,
    private readonly clock: Clock,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const state = await this.transfers.confirm(String(job.payload['transferId']));
    return state === 'final'
      ? { status: 'done' }
      : { status: 'retry', at: new Date(this.clock.now().getTime() + CONFIRM_EVERY_MS) };
  }
}
