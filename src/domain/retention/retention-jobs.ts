import { sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Database, Executor } from '../../db/client.js';
import type { Clock } from '../clock.js';
import type { JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { laneOf } from '../jobs/lanes.js';
import { pruneExpired, type RetentionPolicy } from './retention.js';

export const RETENTION_JOB = 'retention.prune';

export const retentionPolicyOf = (config: Config): RetentionPolicy => ({
  eventsDays: config.RETENTION_EVENTS_DAYS,
  jobsDays: config.RETENTION_JOBS_DAYS,
  idempotencyHours: config.RETENTION_IDEMPOTENCY_HOURS,
  batchSize: config.RETENTION_BATCH_SIZE,
});

/** Prunes by the retention policy, then schedules its own next run (the maintenance lane runs one at a time). */
export class RetentionPruneHandler implements JobHandler {
  readonly kind = RETENTION_JOB;
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly policy: RetentionPolicy,
    private readonly everyMs: number,
  ) {}

  async run(): Promise<JobOutcome> {
    await pruneExpired(this.db, this.clock.now(), this.policy);
    return { status: 'retry', at: new Date(this.clock.now().getTime() + this.everyMs) };
  }
}

export const retentionJobHandlers = (db: Database, clock: Clock, config: Config): JobHandler[] => [
  new RetentionPruneHandler(db, clock, retentionPolicyOf(config), config.RETENTION_EVERY_MS),
];

/**
 * Makes sure one pruning job is queued (the job reschedules itself). Instances starting together
 * may both find none; the advisory lock taken in the statement's transaction serialises them.
 */
export async function scheduleRetention(db: Database, at: Date): Promise<void> {
  await db.transaction(async (tx: Executor) => {
    await tx.execute(sql`select pg_advisory_xact_lock(7262020017)`);
    await tx.execute(sql`insert into jobs (kind, lane, tenant, run_at)
      select ${RETENTION_JOB}, ${laneOf(RETENTION_JOB)}, '', ${at.toISOString()}::timestamptz
      where not exists (select 1 from jobs where kind = ${RETENTION_JOB} and status = 'pending')`);
  });
}
