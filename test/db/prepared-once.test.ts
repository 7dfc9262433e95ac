import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/db/client.js';
import { fencedOf, jobsOf } from '../../src/db/pool-routing.js';
import { preparedOnce } from '../../src/db/prepared-once.js';
import { users } from '../../src/db/schema.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

/**
 * A hot read is built once per handle. A job's handle is made for each job run, so the read a job
 * makes (the delivery worker's, before every webhook attempt) is built once for its database's
 * jobs handle, not once per job.
 */
describe('preparedOnce', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  /** A user's email read, counting how often it is built and on which handle. */
  function countedRead() {
    const builtOn: Executor[] = [];
    const read = preparedOnce((db) => {
      builtOn.push(db);
      return db
        .select({ email: users.email })
        .from(users)
        .where(sql`${users.id} = ${sql.placeholder('id')}`)
        .prepare(`test_prepared_once_${randomUUID().replaceAll('-', '')}`);
    });
    return { read, builtOn };
  }

  it('builds a read once for every job run of a database, on its jobs handle, and answers as before', async () => {
    const { user } = await seedTenant(t.services);
    const { read, builtOn } = countedRead();
    for (let run = 0; run < 3; run += 1) {
      const jobHandle = fencedOf(t.services.db, { id: randomUUID(), leaseToken: randomUUID() });
      expect(await read(jobHandle).execute({ id: user.id })).toEqual([{ email: user.email }]);
    }
    expect(builtOn).toEqual([jobsOf(t.services.db)]);
  });

  it('builds it once per handle otherwise', async () => {
    const { user } = await seedTenant(t.services);
    const { read, builtOn } = countedRead();
    for (let run = 0; run < 3; run += 1)
      expect(await read(t.services.db).execute({ id: user.id })).toEqual([{ email: user.email }]);
    expect(builtOn).toEqual([t.services.db]);
  });
});
