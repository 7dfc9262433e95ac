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
