import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { ApiKeyService } from '../../src/domain/auth/api-key-service.js';
import { apiKeyStore } from '../../src/domain/auth/api-key-store.js';
import { systemClock } from '../../src/domain/clock.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

/** An API key's lookup when its cached principal is missing: one query however many requests wait. */
describe('looking up an API key that is not cached', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const findActiveApiKeyByHash = apiKeyStore.findActiveApiKeyByHash;
  afterEach(() => {
    apiKeyStore.findActiveApiKeyByHash = findActiveApiKeyByHash;
  });

  /**
   * A service on the test database whose key reads are counted, and refused while `failing`. The
   * read is counted where it runs (the store's one lookup, a statement prepared once per handle),
   * not where SQL is built.
   */
  function countingService() {
    const reads = { count: 0, failing: false };
    const db = new Proxy(t.services.db, {}) as Database;
    apiKeyStore.findActiveApiKeyByHash = async (executor, hash) => {
      if (executor === db) {
        reads.count += 1;
        if (reads.failing) throw new Error('the database is unreachable');
      }
      return findActiveApiKeyByHash(executor, hash);
    };
    return { service: new ApiKeyService(db, systemClock, 60_000), reads };
  }

  it('sends one query for concurrent requests with the same key, and answers each of them', async () => {
    const { keys } = await seedTenant(t.services);
    const { service, reads } = countingService();
    const principals = await Promise.all(Array.from({ length: 20 }, () => service.authenticate(keys.READ_ONLY)));
    expect(reads.count).toBe(1);
    expect(principals[0]).toMatchObject({ kind: 'api_key' });
    for (const principal of principals) expect(principal).toBe(principals[0]);
    // Cached now: no further query.
    await service.authenticate(keys.READ_ONLY);
    expect(reads.count).toBe(1);
  });

  it('does not cache what a lookup read while a key was forgotten (revoked)', async () => {
    const { keys } = await seedTenant(t.services);
    const { service, reads } = countingService();
    const during = service.authenticate(keys.READ_ONLY);
    service.forget('any-key-id');
    expect(await during).toMatchObject({ kind: 'api_key' });
    await service.authenticate(keys.READ_ONLY);
    expect(reads.count).toBe(2);
  });

  it('starts a new lookup for requests after a key was forgotten, not joining the one under way', async () => {
    const { keys } = await seedTenant(t.services);
    const { service, reads } = countingService();
    const before = service.authenticate(keys.READ_ONLY);
    service.forget('any-key-id');
    const after = service.authenticate(keys.READ_ONLY);
    await Promise.all([before, after]);
    expect(reads.count).toBe(2);
    // The lookup that began after forget() was cached.
    await service.authenticate(keys.READ_ONLY);
    expect(reads.count).toBe(2);
  });

  it('refuses the next request once the key is revoked while its lookup is under way', async () => {
    const { user, keys } = await seedTenant(t.services);
    const { service } = countingService();
    const [record] = (await service.list(user.id)).filter((k) => k.permission === 'READ_ONLY');
    // Whichever commits first, the lookup's read or the revocation, nothing read before the
    // revocation may stay cached after it.
    const during = service.authenticate(keys.READ_ONLY);
    await service.revoke(user.id, record!.id);
    await during;
    expect(await service.authenticate(keys.READ_ONLY)).toBeUndefined();
  });

  it('lets every waiter see a failed lookup, and tries again on the next request', async () => {
    const { keys } = await seedTenant(t.services);
    const { service, reads } = countingService();
    reads.failing = true;
    const waiting = [service.authenticate(keys.READ_ONLY), service.authenticate(keys.READ_ONLY)];
    const outcomes = await Promise.allSettled(waiting);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(reads.count).toBe(1);
    reads.failing = false;
    expect(await service.authenticate(keys.READ_ONLY)).toMatchObject({ kind: 'api_key' });
    expect(reads.count).toBe(2);
  });
});
