import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { RoutedPool } from '../../src/db/pool-routing.js';

/** A pool whose connections fail their first statement, as a cut connection or a restarting server does. */
class CutPool extends pg.Pool {
  readonly released: unknown[] = [];
  constructor(private readonly failing: boolean) {
    super({ max: 1 });
  }
  override connect(): never {
    const client = {
      query: async () => {
        if (this.failing) throw Object.assign(new Error('terminating connection'), { code: '57P01' });
        return { rows: [], rowCount: 0, fields: [], command: 'BEGIN' };
      },
      release: (error?: unknown) => this.released.push(error ?? 'kept'),
    };
    return Promise.resolve(client) as never;
  }
}

describe('a transaction whose BEGIN fails', () => {
  it('gives its connection back, discarded, instead of keeping it checked out for good', async () => {
    const cut = new CutPool(true);
    const db = drizzle(new RoutedPool({ request: cut, read: cut, jobs: cut }));
    await expect(db.transaction(async () => 'never')).rejects.toThrow();
    // Released once, with the error: pg-pool destroys a client released with an error.
    expect(cut.released).toHaveLength(1);
    expect(cut.released[0]).toBeInstanceOf(Error);
  });

  it('a BEGIN that succeeds leaves the release to the transaction, once', async () => {
    const healthy = new CutPool(false);
    const db = drizzle(new RoutedPool({ request: healthy, read: healthy, jobs: healthy }));
    expect(await db.transaction(async () => 'done')).toBe('done');
    expect(healthy.released).toEqual(['kept']);
  });
});
