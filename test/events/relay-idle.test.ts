import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, queryRows } from '../../src/db/client.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { type RelayLoop, startRelay } from '../../src/domain/events/relay.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import { isolatedTestDatabase, onPostgres } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * An idle relay sleeps longer after each round that finds nothing (idleMs, doubling, up to
 * idleMaxMs), so an idle instance stops polling the database ten times a second; events this
 * process records still wake it at once.
 */
describe('an idle event relay', () => {
  let handle: DatabaseHandle;
  const loops: RelayLoop[] = [];
  beforeAll(async () => {
    handle = await isolatedTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  });
  afterAll(async () => {
    // The worker's shared database (PGlite) stays open for the files after this one.
    if (onPostgres) await handle.close();
  });

  const seqOf = async (id: string) =>
    (await queryRows<{ seq: unknown }>(handle.db, sql`select seq from events where id = ${id}`))[0]?.seq ?? null;

  it('sleeps twice as long after each empty round, up to its longest sleep', async () => {
    const sleeps: number[] = [];
    // Nothing left behind by earlier files: the first round stamps it, then the rounds are empty.
    loops.push(startRelay(handle.db, { idleMs: 10, idleMaxMs: 80, onIdle: (ms) => sleeps.push(ms) }));
    await waitUntil(() => sleeps.length >= 6);
    expect(sleeps.slice(0, 6)).toEqual([10, 20, 40, 80, 80, 80]);
  });

  it('reads its longest sleep before each doubling, so a shorter one applies at once', async () => {
    const sleeps: number[] = [];
    let longest = 80;
    loops.push(
      startRelay(handle.db, {
        idleMs: 10,
        idleMaxMs: () => longest,
        onIdle: (ms) => {
          sleeps.push(ms);
          // Once at the longest, as the workers' is when the wake channel loses its session.
          if (ms === 80) longest = 20;
        },
      }),
    );
    await waitUntil(() => sleeps.length >= 7);
    expect(sleeps.slice(0, 7)).toEqual([10, 20, 40, 80, 20, 20, 20]);
  });

  it('after a hint keeps to its first sleep for 2 s, not for the whole of its longest sleep', async () => {
    const sleeps: number[] = [];
    const loop = startRelay(handle.db, { idleMs: 10, idleMaxMs: 3_600_000, onIdle: (ms) => sleeps.push(ms) });
    loops.push(loop);
    await waitUntil(() => sleeps.length >= 3);
    loop.hint();
    const hintedAt = Date.now();
    const from = sleeps.length;
    // Doubling again once the hinted transaction has had 2 s to commit.
    await waitUntil(() => sleeps.slice(from).some((ms) => ms > 10));
    expect(Date.now() - hintedAt).toBeGreaterThanOrEqual(2_000);
    expect(sleeps.slice(from).filter((ms) => ms > 10)).toEqual([20]);
  });

  it('is woken by an event this process records, however long it was sleeping', async () => {
    const tenant = await seedTenant(await createTestServices(handle.db));
    const sleeps: number[] = [];
    // Its first sleep is already an hour: only the hint gets the event stamped within the wait.
    loops.push(startRelay(handle.db, { idleMs: 3_600_000, idleMaxMs: 3_600_000, onIdle: (ms) => sleeps.push(ms) }));
    await waitUntil(() => sleeps.length >= 1);
    expect(sleeps).toEqual([3_600_000]);
    const event = await handle.db.transaction((tx) =>
      recordEvent(
        tx,
        { type: 'transaction.completed', userId: tenant.user.id, environment: 'sandbox', data: { id: randomUUID() } },
        new Date(),
      ),
    );
    await waitUntil(async () => (await seqOf(event.id)) !== null);
  });
});
