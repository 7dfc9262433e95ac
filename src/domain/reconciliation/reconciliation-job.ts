import type { Database } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { ensureOnePendingJob } from '../jobs/recurring.js';
import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import type { Reconciliation } from './reconciliation-service.js';

/** In the maintenance lane (lanes.ts), beside the ledger check: one at a time, never in the way of money. */
export const RECONCILE_JOB = 'recon.daily';
/** Makes sure one run is queued (at `at` unless one already is), whatever the number of instances. */
export const scheduleReconciliation = (db: Database, at: Date, besides?: string) =>
  ensureOnePendingJob(db, RECONCILE_JOB, at, besides);

/**
 * Reconciles yesterday in each configured environment, and again the day whose settlement windows
 * have just passed, then queues the next run `everyMs` later.
 */
export class ReconcileHandler implements JobHandler {
  readonly kind = RECONCILE_JOB;
  constructor(
    private readonly reconciliation: Reconciliation,
    private readonly environments: Environment[],
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly everyMs: number,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    // A provider that cannot be read is recorded in its run (outcome failed), not thrown: the
    // schedule goes on and the metric and notice say so.
    for (const environment of this.environments) {
      const settled = this.reconciliation.settledDay(environment);
      if (settled !== this.reconciliation.yesterday())
        await this.reconciliation.run({ environment, date: settled, trigger: 'daily' });
      await this.reconciliation.run({ environment, trigger: 'daily' });
    }
    await scheduleReconciliation(this.db, new Date(this.clock.now().getTime() + this.everyMs), job.id);
    return { status: 'done' };
  }
}
