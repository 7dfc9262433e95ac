import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalFrom } from '../../src/domain/auth/principal.js';
import { seedTenant, startTestApp, type TestApp } from '../helpers/app.js';
import { principalOf } from '../graph/seed.js';

/**
 * The users' cache: when a user's entry expires under load, the requests then in flight for that
 * user share one read, and a change (`forget`) is never answered by a read begun before it.
 */
describe('the users cache reads one user once at a time', () => {
  let t: TestApp;
  beforeAll(async () => {
    ({ t } = await startTestApp());
  });
  afterAll(() => t.close());

  it('32 requests for an uncached user make one read; a forget in between makes a second', async () => {
    const tenant = await seedTenant(t.services);
    const caller = { principal: principalOf(tenant), credential: undefined };
    const users = t.services.users;
    const read = users.usersByIds.bind(users);
    const reads: string[][] = [];
    users.usersByIds = async (ids) => {
      reads.push([...ids]);
      return read(ids);
    };
    try {
      users.forget(tenant.user.id);
      const first = await Promise.all(Array.from({ length: 32 }, () => users.currentUser(caller)));
      expect(reads).toEqual([[tenant.user.id]]);
      expect(new Set(first.map((u) => u.id))).toEqual(new Set([tenant.user.id]));

      users.forget(tenant.user.id);
      const before = users.currentUser(caller);
      users.forget(tenant.user.id); // a change lands while that read is on its way
      const after = users.currentUser(caller);
      await Promise.all([before, after]);
      expect(reads).toHaveLength(3);
    } finally {
      users.usersByIds = read;
    }
  });

  it('a read begun before a forget, finishing last, leaves nothing cached from before the change', async () => {
    const tenant = await seedTenant(t.services);
    const caller = { principal: principalOf(tenant), credential: undefined };
    const users = t.services.users;
    const read = users.usersByIds.bind(users);
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const stale: unknown[] = [];
    let calls = 0;
    users.usersByIds = async (ids) => {
      calls += 1;
      if (calls > 1) return read(ids);
      // Begun before the change, its read (and the cache entry it writes) lands after the change's.
      await firstHeld;
      // From the database, as a read begun before the change is, not from the entry the change's read left.
      users.forget(tenant.user.id);
      const rows = await read(ids);
      stale.push(rows[0]);
      return rows;
    };
    try {
      users.forget(tenant.user.id);
      const before = users.currentUser(caller);
      users.forget(tenant.user.id); // the change lands while the first read is on its way
      const after = await users.currentUser(caller);
      releaseFirst();
      await before;
      expect(stale).toHaveLength(1);
      expect(users.cachedUser(tenant.user.id)).not.toBe(stale[0]);
      expect(await users.currentUser(caller)).not.toBe(stale[0]);
      expect(after).not.toBe(stale[0]);
    } finally {
      users.usersByIds = read;
    }
  });

  it("a request's principal is a copy with its origin; the cached one is untouched", () => {
    const cached = {
      kind: 'api_key' as const,
      credentialId: 'key',
      userId: 'user',
      environment: 'sandbox' as const,
      abilities: new Set(['READ'] as const),
    };
    const copy = principalFrom(cached, { ip: '10.0.0.1', userAgent: 'ua' });
    expect(copy).toEqual({ ...cached, origin: { ip: '10.0.0.1', userAgent: 'ua' } });
    expect(copy).not.toBe(cached);
    expect(cached).not.toHaveProperty('origin');
  });
});
