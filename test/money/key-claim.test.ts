import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { DomainError } from '../../src/domain/errors.js';
import { Idempotency } from '../../src/domain/idempotency/idempotency.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { signal, waitUntil } from '../helpers/wait.js';

const TEST_KEY = Buffer.alloc(32, 7);

describe('the idempotency claim inside the operation’s transaction', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  // The effect under test: a job row of a kind no runner handles (a posting would need balanced entries).
  const effects = async (marker: string) => {
    const result = (await t.services.db.execute(
      sql`select count(*)::int as n from jobs where kind = ${`held-by-test-${marker}`}`,
    )) as unknown as { rows: Array<{ n: number }> };
    return result.rows[0]!.n;
  };
  const effect = (marker: string) => (tx: Parameters<Parameters<TestApp['services']['db']['transaction']>[0]>[0]) =>
    tx.execute(
      sql`insert into jobs (kind, lane, tenant, payload, run_at) values (${`held-by-test-${marker}`}, 'money', '', '{}', now())`,
    );

  async function setup(operation: string) {
    const { user } = await seedTenant(t.services);
    const idempotency = new Idempotency(t.services.db, clock, TEST_KEY, 60_000);
    return { idempotency, scope: { userId: user.id, environment: 'sandbox' as const, operation } };
  }

  it('commits the effect and the answer together, and replays the answer without running again', async () => {
    const { idempotency, scope } = await setup('test.one-commit');
    const marker = crypto.randomUUID();
    let runs = 0;
    const work = async (tx: Parameters<ReturnType<typeof effect>>[0]) => {
      runs++;
      await effect(marker)(tx);
      return { amount: 7n, at: new Date(0) };
    };
    expect(await idempotency.transaction(scope, 'k1', { a: 1 }, work)).toEqual({ amount: 7n, at: new Date(0) });
    expect(await idempotency.transaction(scope, 'k1', { a: 1 }, work)).toEqual({ amount: 7n, at: new Date(0) });
    expect(runs).toBe(1);
    expect(await effects(marker)).toBe(1);
    await expect(idempotency.transaction(scope, 'k1', { a: 2 }, work)).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
    // The key is not stored before the work commits: a crash (an unexpected error) leaves nothing.
    await expect(
      idempotency.transaction(scope, 'k2', {}, async (tx) => {
        await effect(marker)(tx);
        throw new Error('process killed');
      }),
    ).rejects.toThrow('process killed');
    expect(await effects(marker)).toBe(1);
    expect(await idempotency.transaction(scope, 'k2', {}, async () => 'fresh')).toBe('fresh');
  });

  it('rolls a refusal back and replays it from then on', async () => {
    const { idempotency, scope } = await setup('test.refusal');
    const marker = crypto.randomUUID();
    await expect(
      idempotency.transaction(scope, 'k', {}, async (tx) => {
        await effect(marker)(tx);
        throw new DomainError('INSUFFICIENT_FUNDS', 'poor');
      }),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(await effects(marker)).toBe(0);
    await expect(idempotency.transaction(scope, 'k', {}, async () => 'rich now')).rejects.toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      message: 'poor',
    });
  });

  it('never gives a key back when storing the answer fails after the effect committed', async () => {
    const { scope } = await setup('test.store-fails');
    // A database whose next write outside a transaction (the answer's store) fails once.
    let failNextUpdate = true;
    const db = new Proxy(t.services.db, {
      get(target, property, receiver) {
        if (property === 'update' && failNextUpdate) {
          failNextUpdate = false;
          return () => {
            throw new Error('connection lost');
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const idempotency = new Idempotency(db, clock, TEST_KEY, 60_000);
    const marker = crypto.randomUUID();
    let runs = 0;
    const work = async () => {
      runs++;
      await t.services.db.transaction(effect(marker));
      return 'paid';
    };
    expect(await idempotency.run(scope, 'k', {}, work)).toBe('paid');
    // The retry must not run the work again: it waits (409) or replays, never repeats.
    await idempotency.run(scope, 'k', {}, work).then(
      (answer) => expect(answer).toBe('paid'),
      (error) => expect(error).toMatchObject({ code: 'CONFLICT' }),
    );
    expect(runs).toBe(1);
    expect(await effects(marker)).toBe(1);
  });

  it.skipIf(!onPostgres)('answers 409 to the same key while its transaction is open, then replays', async () => {
    const { idempotency, scope } = await setup('test.concurrent');
    const marker = crypto.randomUUID();
    const entered = signal();
    const letGo = signal();
    const first = idempotency.transaction(scope, 'k', {}, async (tx) => {
      await effect(marker)(tx);
      entered.resolve();
      await letGo.promise;
      return 'first';
    });
    await entered.promise;
    await expect(idempotency.transaction(scope, 'k', {}, async () => 'second')).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    letGo.resolve();
    expect(await first).toBe('first');
    expect(await idempotency.transaction(scope, 'k', {}, async () => 'third')).toBe('first');
    expect(await effects(marker)).toBe(1);
  });

  it.skipIf(!onPostgres)('rolls back and replays when a concurrent request answered the key first', async () => {
    const { idempotency, scope } = await setup('test.race');
    const marker = crypto.randomUUID();
    const other = new Idempotency(t.services.db, clock, TEST_KEY, 60_000);
    let runs = 0;
    // While this request's work runs (its claim saw no row), another connection answers the same
    // key: the lock cannot see it (it is taken here), so insert the answer as a committed row would be.
    const answer = await idempotency.transaction(scope, 'k', {}, async (tx) => {
      runs++;
      await effect(marker)(tx);
      if (runs === 1)
        await t.services.db.execute(
          sql`insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, response)
              values (${scope.userId}, 'sandbox', ${scope.operation}, 'k', ${other.fingerprint({})}, 'done',
                ${JSON.stringify({ result: 'theirs' })}::jsonb)`,
        );
      return 'mine';
    });
    expect(answer).toBe('theirs');
    expect(runs).toBe(1);
    expect(await effects(marker)).toBe(0);
  });

  it.skipIf(!onPostgres)(
    'leaves no key behind when its process dies mid-transaction, so a replay runs fresh',
    async () => {
      const { idempotency, scope } = await setup('test.killed');
      const marker = crypto.randomUUID();
      // The dying process: its own pool, whose connection is terminated while the keyed work is open.
      const dying = await openDatabase({ databaseUrl: testDatabaseUrl(), poolSize: 1 });
      dying.onConnectionError(() => {});
      try {
        const entered = signal<number>();
        const letGo = signal();
        const doomed = new Idempotency(dying.db, clock, TEST_KEY, 60_000).transaction(scope, 'k', {}, async (tx) => {
          await effect(marker)(tx);
          const pid = (await tx.execute(sql`select pg_backend_pid() as pid`)) as unknown as {
            rows: Array<{ pid: number }>;
          };
          entered.resolve(pid.rows[0]!.pid);
          await letGo.promise;
          return 'never';
        });
        // A run that ends before its work starts fails here, not by the test's timeout.
        const pid = await Promise.race([
          entered.promise,
          doomed.then(() => Promise.reject(new Error('ran to the end'))),
        ]);
        await t.services.db.execute(sql`select pg_terminate_backend(${pid})`);
        letGo.resolve();
        await expect(doomed).rejects.toThrow();
        await waitUntil(async () => {
          const alive = (await t.services.db.execute(
            sql`select 1 from pg_stat_activity where pid = ${pid}`,
          )) as unknown as { rows: unknown[] };
          return alive.rows.length === 0;
        });
        const keys = (await t.services.db.execute(
          sql`select status from idempotency_keys where user_id = ${scope.userId} and operation = ${scope.operation}`,
        )) as unknown as { rows: unknown[] };
        expect(keys.rows).toHaveLength(0);
        expect(await effects(marker)).toBe(0);
        // The replay after the restart is neither refused as busy nor answered from a half-done run.
        expect(await idempotency.transaction(scope, 'k', {}, async () => 'after restart')).toBe('after restart');
      } finally {
        await dying.close().catch(() => {});
      }
    },
  );
});
