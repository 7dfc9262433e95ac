import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { claimLaneJobs } from '../../src/domain/jobs/job-claims.js';
import { testDatabase } from '../helpers/database.js';

describe('claim order', () => {
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
  });

  it("claims an endpoint's jobs due at the same moment in their events' order, and starts them in it", async () => {
    // A kind of this test's own (no other file's runner takes it), in the webhooks lane.
    const kind = `claim-order-${randomUUID()}`;
    const tenant = randomUUID();
    const key = randomUUID();
    const at = new Date();
    // Written highest first, so neither the index nor the heap holds them in `seq` order.
    for (const seq of [5, 4, 3, 2, 1])
      await db.execute(
        sql`insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at, event_seq)
          values (${kind}, 'webhooks', ${tenant}, ${key}, '{}'::jsonb, ${at.toISOString()}::timestamptz, ${seq})`,
      );
    const claim = (perKey: number) =>
      claimLaneJobs(db, {
        lane: 'webhooks',
        kinds: [kind],
        limit: 10,
        perTenant: 10,
        perKey,
        runningPerTenant: new Map(),
        runningPerKey: new Map(),
        running: [],
        workerId: 'claim-order-test',
        leaseToken: randomUUID(),
        now: new Date(at.getTime() + 1000),
        leaseUntil: new Date(at.getTime() + 60_000),
      });
    // One at a time for the endpoint: the first event's job.
    expect((await claim(1)).map((job) => Number(job.event_seq))).toEqual([1]);
    // The rest, in order.
    expect((await claim(10)).map((job) => Number(job.event_seq))).toEqual([2, 3, 4, 5]);
  });
});
