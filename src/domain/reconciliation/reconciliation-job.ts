import { and, eq, ne, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { jobs } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { enqueueJob, type Job, type JobHandler, type JobOutcome } from '../jobs/job-runner.js';
import type { Reconciliation } from './reconciliation-service.js';

/** In the maintenance lane (lanes.ts), beside the ledger check: one at a time, never in the way of money. */
export const RECONCILE_JOB = 'recon.daily';
/** Arbitrary, fixed: serialises "is a run scheduled?" across instances. */
const SCHEDULE_LOCK_KEY = 7_262_020_021;

/** Makes sure one run is queued (at `at` unless one already is), whatever the number of instances. */
export async function scheduleReconciliation(db: Database, at: Date, besides?: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SCHEDULE_LOCK_KEY})`);
    const [queued] = await tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.kind, RECONCILE_JOB), eq(jobs.status, 'pending'), besides ? ne(jobs.id, besides) : undefined))
      .limit(1);
    if (!queued) await enqueueJob(tx, { kind: RECONCILE_JOB, runAt: at, tenant: '' });
  });
}

/** Reconciles yesterday in each configured environment, then queues the next run `everyMs` later. */
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
    for (const environment of this.environments) await this.reconciliation.run({ environment, trigger: 'daily' });
    await scheduleReconciliation(this.db, new Date(this.clock.now().getTime() + this.everyMs), job.id);
    return { status: 'done' };
  }
}
