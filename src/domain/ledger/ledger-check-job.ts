import { and, eq, ne, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { jobs } from '../../db/schema.js';
import type { Clock } from '../clock.js';
import { enqueueJob, type Job, type JobHandler, type JobOutcome } from '../jobs/job-runner.js';
import type { LedgerCheck } from './ledger-check.js';

export const LEDGER_CHECK_JOB = 'ledger.check';
/** Arbitrary, fixed: serialises "is a check scheduled?" across instances. */
const SCHEDULE_LOCK_KEY = 7_262_020_020;

/**
 * Makes sure one check is queued (at `at` unless one already is). Every instance calls this at start; the advisory lock makes the
 * look-and-insert atomic, so the schedule is one chain of jobs however many instances run.
 */
export async function scheduleLedgerCheck(db: Database, at: Date, besides?: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SCHEDULE_LOCK_KEY})`);
    const [queued] = await tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(
        and(eq(jobs.kind, LEDGER_CHECK_JOB), eq(jobs.status, 'pending'), besides ? ne(jobs.id, besides) : undefined),
      )
      .limit(1);
    if (!queued) await enqueueJob(tx, { kind: LEDGER_CHECK_JOB, runAt: at, tenant: '' });
  });
}

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
