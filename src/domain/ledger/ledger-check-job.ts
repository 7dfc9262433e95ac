import type { Database } from '../../db/client.js';
import type { Clock } from '../clock.js';
import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { ensureOnePendingJob } from '../jobs/recurring.js';
import type { LedgerCheck } from './ledger-check.js';

export const LEDGER_CHECK_JOB = 'ledger.check';
/** Makes sure one check is queued (at `at` unless one already is): one chain of jobs however many instances run. */
export const scheduleLedgerCheck = (db: Database, at: Date, besides?: string) =>
  ensureOnePendingJob(db, LEDGER_CHECK_JOB, at, besides);

/** Runs the invariant check, then queues the next one `everyMs` later. */
export class LedgerCheckHandler implements JobHandler {
  readonly kind = LEDGER_CHECK_JOB;
  constructor(
    private readonly check: LedgerCheck,
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly everyMs: number,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    await this.check.run();
    // Besides this job (still pending until recorded): a rerun after a crash queues no second chain.
    await scheduleLedgerCheck(this.db, new Date(this.clock.now().getTime() + this.everyMs), job.id);
    return { status: 'done' };
  }
}
