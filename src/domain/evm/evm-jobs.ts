import type { Clock } from '../clock.js';
import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { EVM_CONFIRM_JOB } from './evm-send-store.js';
import { EVM_CONFIRM_EVERY_MS, type EvmTransfers } from './evm-transfers.js';

/** Follows a stored EVM send until it is final: receipts, re-broadcasts, a cancel for a dropped one. */
export class EvmConfirmHandler implements JobHandler {
  readonly kind = EVM_CONFIRM_JOB;
  constructor(
    private readonly transfers: EvmTransfers,
    private readonly clock: Clock,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const state = await this.transfers.confirm(String(job.payload['transferId']));
    return state === 'final'
      ? { status: 'done' }
      : { status: 'retry', at: new Date(this.clock.now().getTime() + EVM_CONFIRM_EVERY_MS) };
  }
}
