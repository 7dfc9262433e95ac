import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import type { Clock } from '../clock.js';
import type { JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { ensureOnePendingJob } from '../jobs/recurring.js';
import { pruneExpired, pruneHistory, type RetentionPolicy } from './retention.js';

export const RETENTION_JOB = 'retention.prune';

export const retentionPolicyOf = (config: Config): RetentionPolicy => ({
  eventsDays: config.RETENTION_EVENTS_DAYS,
  jobsDays: config.RETENTION_JOBS_DAYS,
  idempotencyHours: config.RETENTION_IDEMPOTENCY_HOURS,
  batchSize: config.RETENTION_BATCH_SIZE,
  historyDays: config.RETENTION_HISTORY_DAYS,
  sandboxSignaturesDays: config.RETENTION_SANDBOX_SIGNATURES_DAYS,
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
    await pruneHistory(this.db, this.clock.now(), this.policy);
    return { status: 'retry', at: new Date(this.clock.now().getTime() + this.everyMs) };
  }
}

export const retentionJobHandlers = (db: Database, clock: Clock, config: Config): JobHandler[] => [
  new RetentionPruneHandler(db, clock, retentionPolicyOf(config), config.RETENTION_EVERY_MS),
];

/** Makes sure one pruning job is queued (the job reschedules itself). */
export const scheduleRetention = (db: Database, at: Date) => ensureOnePendingJob(db, RETENTION_JOB, at);
