import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema.js';
import { enqueueJob, type Job } from '../../src/domain/jobs/job-runner.js';

/**
 * A job row this test holds the lease of, for calling a handler's `run` directly with a job as a
 * claim gives it (through the runner, the handler's transactions are fenced by this lease, and
 * `assertLease` checks it by hand). Its kind is one no runner handles, so no worker claims it
 * meanwhile.
 */
export async function heldJob(
  db: Database,
  job: { payload: Record<string, unknown>; tenant: string; runAt?: Date },
): Promise<Job> {
  const runAt = job.runAt ?? new Date();
  const kind = `held-by-test-${randomUUID()}`;
  const id = await enqueueJob(db, { kind, payload: job.payload, runAt, tenant: job.tenant });
  const leaseToken = randomUUID();
  await db.update(jobs).set({ leaseToken }).where(eq(jobs.id, id));
  return {
    id,
    kind,
    payload: job.payload,
    attempts: 1,
    runAt,
    tenant: job.tenant,
    leaseToken,
    signal: new AbortController().signal,
  };
}
