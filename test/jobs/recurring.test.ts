import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema.js';
import { ensureOnePendingJob } from '../../src/domain/jobs/recurring.js';
import { testDatabase } from '../helpers/database.js';

describe('a recurring system job', () => {
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
  });
  const pending = (kind: string) =>
    db
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, kind), eq(jobs.status, 'pending')));

  it('is queued once however many instances ask at once, and again only besides the running one', async () => {
    const kind = `retention.k-${randomUUID()}`;
    const at = new Date('2031-01-01T00:00:00Z');
    await Promise.all([1, 2, 3].map(() => ensureOnePendingJob(db, kind, at)));
    const [first, ...others] = await pending(kind);
    expect(others).toHaveLength(0);
    expect(first).toMatchObject({ tenant: '', lane: 'maintenance', runAt: at });
    // The running job schedules its successor: one more, not one per call.
    const next = new Date('2031-01-01T01:00:00Z');
    await ensureOnePendingJob(db, kind, next, first!.id);
    await ensureOnePendingJob(db, kind, next, first!.id);
    expect((await pending(kind)).map((j) => j.runAt.toISOString()).sort()).toEqual([
      at.toISOString(),
      next.toISOString(),
    ]);
  });
});
