import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

/** A controls edit finds its key under the key's own row lock: any key it may not edit is not found. */
describe('editing a key’s controls', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const edit = (userId: string, keyId: string, environment?: 'sandbox' | 'production') =>
    t.services.keyControls.update(
      userId,
      keyId,
      (current) => ({ ...current, maxDailyCount: 7 }),
      undefined,
      environment,
    );

  /** A tenant's key, another tenant, and the environment the key is not in: what a refusal is tried with. */
  const keyAndStranger = async () => {
    const owner = await seedTenant(t.services);
    const other = await seedTenant(t.services);
    const [key] = await t.services.apiKeys.list(owner.user.id);
    const elsewhere: 'sandbox' | 'production' = key!.environment === 'sandbox' ? 'production' : 'sandbox';
    return { owner, other, key: key!, elsewhere };
  };

  it('edits the caller’s own key in its environment', async () => {
    const tenant = await seedTenant(t.services);
    const [key] = await t.services.apiKeys.list(tenant.user.id);
    const saved = await edit(tenant.user.id, key!.id, key!.environment);
    expect(saved.maxDailyCount).toBe(7);
  });

  it('answers not found for an id that is no UUID, another user’s key, another environment and a revoked key', async () => {
    const { owner, other, key, elsewhere } = await keyAndStranger();
    const refusals: Array<() => Promise<unknown>> = [
      () => edit(owner.user.id, 'not-a-uuid\u0000'),
      () => edit(other.user.id, key.id),
      () => edit(owner.user.id, key.id, elsewhere),
    ];
    for (const refused of refusals) await expect(refused()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await t.services.apiKeys.revoke(owner.user.id, key.id);
    await expect(edit(owner.user.id, key.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await t.services.keyControls.of(t.services.db, key.id)).not.toMatchObject({ maxDailyCount: 7 });
  });

  it('revoking answers not found for an id that is no UUID, another user’s key and another environment, and revokes once', async () => {
    const { owner, other, key, elsewhere } = await keyAndStranger();
    const refusals: Array<() => Promise<unknown>> = [
      () => t.services.apiKeys.revoke(owner.user.id, 'not-a-uuid\u0000'),
      () => t.services.apiKeys.revoke(other.user.id, key.id),
      () => t.services.apiKeys.revoke(owner.user.id, key.id, elsewhere),
    ];
    for (const refused of refusals) await expect(refused()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const first = await t.services.apiKeys.revoke(owner.user.id, key.id);
    const again = await t.services.apiKeys.revoke(owner.user.id, key.id);
    expect(again.revokedAt).toEqual(first.revokedAt);
  });
});
