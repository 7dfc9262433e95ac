import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';

describe('the embedded database', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openDatabase({ pgliteDataDir: 'memory://', migrate: false });
  });
  afterAll(() => database.close());

  it("keeps shared buffers small: PostgreSQL's default 128 MB sat in memory that never shrinks", async () => {
    const result = (await database.db.execute('show shared_buffers')) as unknown as {
      rows: Array<{ shared_buffers: string }>;
    };
    expect(result.rows[0]!.shared_buffers).toBe('16MB');
  });
});
