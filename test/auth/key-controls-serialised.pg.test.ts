import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlsFromText } from '../../src/domain/auth/key-controls-input.js';
import { NO_CONTROLS } from '../../src/domain/auth/key-controls.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Two saves of one key's controls run one after the other: the second compares its list against
 * what the first wrote. Without the key's row lock, a save re-sending an old list it read before a
 * concurrent save narrowed it wrote that old list back, unchecked and unaudited. A session holding
 * the key's row stands in for the first save; the service's save must wait for it (seen in
 * pg_stat_activity, no timing) and then judge against the list it committed.
 */
describe.skipIf(!onPostgres)('saving a key’s controls', () => {
  let t: TestApp;
  const holder = new pg.Client({ connectionString: testDatabaseUrl() });
  beforeAll(async () => {
    t = await createTestApp();
    await holder.connect();
  });
  afterAll(async () => {
    await holder.end();
    await t.close();
  });

  /** A tenant's production key with the allow-list 198.51.100.0/24 saved. */
  async function keyWithList() {
    const tenant = await seedTenant(t.services);
    const keyId = (await t.services.apiKeys.list(tenant.user.id)).find((k) => k.environment === 'production')!.id;
    await t.services.keyControls.set(tenant.user.id, keyId, { ...NO_CONTROLS, ipAllowList: ['198.51.100.0/24'] });
    return { userId: tenant.user.id, keyId };
  }

  /**
   * The concurrent save: holds the key's row, starts `save`, waits until it waits for this session's
   * lock (pg_blocking_pids names it), narrows the list to 203.0.113.0/24, commits, then lets it finish.
   */
  async function saveBehindConcurrentSave(
    keyId: string,
    save: () => Promise<unknown>,
    concurrent = `update api_key_controls set ip_allow_list = array['203.0.113.0/24'] where api_key_id = $1`,
  ): Promise<void> {
    await holder.query('begin');
    await holder.query('select id from api_keys where id = $1 for update', [keyId]);
    const saving = save();
    // Settled here, awaited at the end: a save refused after the commit must not count as unhandled.
    saving.catch(() => undefined);
    await waitUntil(async () => {
      const { rows } = await holder.query(
        'select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))',
      );
      return rows[0].n > 0;
    });
    await holder.query(concurrent, [keyId]);
    await holder.query('commit');
    await saving;
  }

  it('waits for a concurrent save of the same key and compares against what it wrote', async () => {
    const { userId, keyId } = await keyWithList();
    const { keyControls, db } = t.services;
    await saveBehindConcurrentSave(keyId, () =>
      keyControls.set(userId, keyId, { ...NO_CONTROLS, maxDailyCount: 7, ipAllowList: ['198.51.100.0/24'] }),
    );

    // The waiting save read the committed list, so its own list counts as a change: the audit log has it.
    expect(await keyControls.of(db, keyId)).toMatchObject({ maxDailyCount: 7, ipAllowList: ['198.51.100.0/24'] });
    const {
      records: [latest],
    } = await t.services.auditLog.list(
      { kind: 'session', credentialId: 'x', userId, environment: 'production', abilities: new Set() },
      { action: 'api_key.controls_changed' },
      1,
    );
    expect(latest).toMatchObject({
      targetId: keyId,
      changes: { ipAllowList: { from: ['203.0.113.0/24'], to: ['198.51.100.0/24'] } },
    });
  });

  it('merges a partial edit with what a concurrent save wrote, not with a copy read before it', async () => {
    const { userId, keyId } = await keyWithList();
    const { keyControls, db } = t.services;
    // This edit sends one field only.
    await saveBehindConcurrentSave(keyId, () =>
      keyControls.update(userId, keyId, (current) => controlsFromText({ maxDailyCount: '5' }, current)),
    );

    // The field the edit left out keeps the list the other save committed.
    expect(await keyControls.of(db, keyId)).toMatchObject({ maxDailyCount: 5, ipAllowList: ['203.0.113.0/24'] });
  });

  it('refuses a save that waited while the key was revoked', async () => {
    const { userId, keyId } = await keyWithList();
    const { keyControls, db } = t.services;
    await expect(
      saveBehindConcurrentSave(
        keyId,
        () => keyControls.set(userId, keyId, { ...NO_CONTROLS, maxDailyCount: 9 }),
        'update api_keys set revoked_at = now() where id = $1',
      ),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await keyControls.of(db, keyId)).toMatchObject({ maxDailyCount: null, ipAllowList: ['198.51.100.0/24'] });
  });
});
