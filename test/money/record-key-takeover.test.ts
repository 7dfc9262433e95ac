import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { KeyRaceError, type KeyRef, recordKey, refuseKey } from '../../src/domain/money/key-claim.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

/**
 * The claim reads the key in one statement whose snapshot is taken before its try-lock, so a request
 * whose twin committed in between sees no key row. Recording must then refuse to take over the twin's
 * live `running` row (a retry finds it and answers 409 or the replay), and take over only a row whose
 * lease is over (the crash path).
 */
describe('recording a key over an existing running row', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  async function runningKey(leaseUntil: Date) {
    const { user } = await seedTenant(t.services);
    const ref: KeyRef = {
      scope: { userId: user.id, environment: 'sandbox', operation: 'test.record-takeover' },
      key: randomUUID(),
      requestHash: 'same-body',
    };
    const twin = randomUUID();
    await t.services.db.transaction((tx) => recordKey(tx, ref, twin, leaseUntil, new Date()));
    const resourceOf = async () => {
      const result = (await t.services.db.execute(
        sql`select resource_id from idempotency_keys where user_id = ${user.id} and key = ${ref.key}`,
      )) as unknown as { rows: Array<{ resource_id: string }> };
      return result.rows[0]!.resource_id;
    };
    return { ref, twin, resourceOf };
  }

  it('refuses to take over a twin whose lease is live: the twin keeps the key', async () => {
    const now = new Date();
    const { ref, twin, resourceOf } = await runningKey(new Date(now.getTime() + 60_000));
    await expect(
      t.services.db.transaction((tx) => recordKey(tx, ref, randomUUID(), new Date(now.getTime() + 60_000), now)),
    ).rejects.toBeInstanceOf(KeyRaceError);
    expect(await resourceOf()).toBe(twin);
  });

  it('takes over a running row whose lease is over', async () => {
    const now = new Date();
    const { ref, resourceOf } = await runningKey(new Date(now.getTime() - 1_000));
    const mine = randomUUID();
    await t.services.db.transaction((tx) => recordKey(tx, ref, mine, new Date(now.getTime() + 60_000), now));
    expect(await resourceOf()).toBe(mine);
  });

  it('a refusal read against a live twin answers 409, not the refusal; after the lease it is not stored', async () => {
    const now = new Date();
    const refusal = new DomainError('INSUFFICIENT_FUNDS', 'Insufficient funds.');
    const live = await runningKey(new Date(now.getTime() + 60_000));
    await expect(refuseKey(t.services.db, live.ref, refusal, now)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await live.resourceOf()).toBe(live.twin);
    const stale = await runningKey(new Date(now.getTime() - 1_000));
    expect(await refuseKey(t.services.db, stale.ref, refusal, now)).toBeUndefined();
    expect(await stale.resourceOf()).toBe(stale.twin);
  });
});
