import { and, eq, ne, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { jobs } from '../../db/schema.js';
import { enqueueJob } from './job-runner.js';

/** Arbitrary, fixed: the first half of the advisory lock that serialises "is one queued?" per kind. */
const SCHEDULE_LOCK_SPACE = 7_262_020;

/**
 * Makes sure one job of a recurring system kind is pending (queued at `at` unless one already is).
 * Every instance calls this at start, and some handlers after each run; the advisory lock (per
 * kind) makes the look-and-insert atomic, so the kind is one chain of jobs however many instances
 * run. `besides`: a job to leave out of the look (the running one, still pending until recorded).
 */
export async function ensureOnePendingJob(db: Database, kind: string, at: Date, besides?: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SCHEDULE_LOCK_SPACE}, hashtext(${kind}))`);
    const [queued] = await tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.kind, kind), eq(jobs.status, 'pending'), besides ? ne(jobs.id, besides) : undefined))
      .limit(1);
    if (!queued) await enqueueJob(tx, { kind, runAt: at, tenant: '' });
  });
}
