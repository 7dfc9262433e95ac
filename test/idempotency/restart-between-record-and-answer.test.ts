import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type DatabaseHandle, openDatabase, queryRows, type Tx } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { Idempotency } from '../../src/domain/idempotency/idempotency.js';
import { answer, openKeyed } from '../../src/domain/lifecycle/keyed.js';
import type { KeyRef } from '../../src/domain/money/key-claim.js';
import { createTestServices } from '../helpers/app.js';
import { onPostgres, testDatabase, testDatabaseUrl } from '../helpers/database.js';

const FINGERPRINT_KEY = Buffer.alloc(32, 9);
/** The lease a key recorded before a provider call keeps: the Idempotency's (IDEMPOTENCY_LEASE_MS), set here. */
const PROVIDER_CALL_LEASE_MS = 45_000;

interface Operation {
  id: string;
  status: string;
  reference: string;
}

/**
 * A process as far as an operation with a provider call is concerned: its own Idempotency (no
 * memory shared with another process) over a database handle of its own on PostgreSQL, and what it
 * did counted: records opened and provider calls made.
 */
class Process {
  opens = 0;
  providerCalls = 0;
  readonly idempotency: Idempotency;
  constructor(
    readonly db: Database,
    clock: ManualClock,
  ) {
    this.idempotency = new Idempotency(db, clock, FINGERPRINT_KEY, PROVIDER_CALL_LEASE_MS);
  }

  /** The operation's first commit: claim the key, record the operation, key stays `running`. */
  open(userId: string, key: string, input: { amount: number }, now: Date) {
    const scope = { userId, environment: 'sandbox' as const, operation: 'test.provider-call' };
    return openKeyed<Operation>(
      this.db,
      this.idempotency,
      now,
      { scope, key, input },
      async (tx: Tx) => {
        this.opens++;
        const [row] = await queryRows<Operation>(
          tx,
          sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference)
            values (${userId}, 'sandbox', 'WITHDRAWAL', 'PENDING', ${input.amount}, ${`op-${key}`})
            returning id, status, reference`,
        );
        return row!;
      },
      async (tx: Tx, id: string) => {
        const [row] = await queryRows<Operation>(
          tx,
          sql`select id, status, reference from wallet_transactions where id = ${id}`,
        );
        return row!;
      },
    );
  }
}

describe('a restart between an Idempotency-Key’s record and its answer', () => {
  const clock = new ManualClock(new Date('2031-03-01T10:00:00Z'));
  let first: DatabaseHandle;
  let second: DatabaseHandle;
  let userId: string;
  beforeAll(async () => {
    first = await testDatabase();
    // On PostgreSQL the new process has connections of its own; PGlite is one process's database.
    second = onPostgres ? await openDatabase({ databaseUrl: testDatabaseUrl(), poolSize: 4, migrate: false }) : first;
    const services = await createTestServices(first.db);
    userId = (
      await services.users.createUser({ email: `i-${randomUUID()}@example.test`, firstName: 'I', lastName: 'R' })
    ).id;
  });
  afterAll(async () => {
    if (onPostgres) await second.close();
  });

  const keyRow = async (db: Database, key: string) =>
    (
      await queryRows<{ status: string; locked_until: Date | null; resource_id: string | null; response: unknown }>(
        db,
        sql`select status, locked_until, resource_id, response from idempotency_keys
          where user_id = ${userId} and operation = 'test.provider-call' and key = ${key}`,
      )
    )[0];
  const recordsOf = async (db: Database, key: string) =>
    (
      await queryRows<{ n: number }>(
        db,
        sql`select count(*)::int as n from wallet_transactions where user_id = ${userId} and reference = ${`op-${key}`}`,
      )
    )[0]!.n;

  it('the replay waits out the dead process’s lease, then takes the record over to finish it, without recording or calling again', async () => {
    const key = `restart-${randomUUID()}`;
    const input = { amount: 500 };
    const dead = new Process(first.db, clock);
    const started = clock.now();

    // The first process records the operation and its key, starts the provider call, and dies.
    const opened = await dead.open(userId, key, input, started);
    expect('opened' in opened).toBe(true);
    const recorded = (opened as { opened: Operation }).opened;
    dead.providerCalls++;
    expect(await keyRow(first.db, key)).toMatchObject({ status: 'running', resource_id: recorded.id });

    // A new process gets the retry while the dead one's lease lasts: 409, nothing done.
    const next = new Process(second.db, clock);
    clock.advance(10_000);
    await expect(next.open(userId, key, input, clock.now())).rejects.toMatchObject({ code: 'CONFLICT' });
    // Other input under the same key is refused as such, whatever state the key is in.
    await expect(next.open(userId, key, { amount: 501 }, clock.now())).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });

    // Once the lease is over the retry takes the operation over: it gets the record to finish
    // (nothing recorded again), and the key is leased to it while it does, so a twin waits.
    clock.advance(PROVIDER_CALL_LEASE_MS);
    const taken = await next.open(userId, key, input, clock.now());
    expect(taken).toMatchObject({ resumed: recorded, ref: { key } });
    const leased = (await keyRow(second.db, key))!;
    expect(leased).toMatchObject({ status: 'running', resource_id: recorded.id });
    expect(new Date(leased.locked_until!).getTime()).toBe(clock.now().getTime() + PROVIDER_CALL_LEASE_MS);
    await expect(new Process(first.db, clock).open(userId, key, input, clock.now())).rejects.toMatchObject({
      code: 'CONFLICT',
    });

    // It finishes the record (here: settles it) and answers the key in that commit.
    const finished = { ...recorded, status: 'COMPLETED' };
    await second.db.transaction(async (tx) => {
      await tx.execute(sql`update wallet_transactions set status = 'COMPLETED' where id = ${recorded.id}`);
      await answer(tx, (taken as { ref: KeyRef }).ref, finished);
    });
    expect(await keyRow(second.db, key)).toMatchObject({ status: 'done', locked_until: null });
    expect((await keyRow(second.db, key))!.response).toEqual({ result: finished });

    // Every later replay, in either process, answers the same without running anything.
    expect(await next.open(userId, key, input, clock.now())).toEqual({ done: finished });
    expect(await dead.open(userId, key, input, clock.now())).toEqual({ done: finished });

    expect({ opens: dead.opens + next.opens, providerCalls: dead.providerCalls + next.providerCalls }).toEqual({
      opens: 1,
      providerCalls: 1,
    });
    expect(await recordsOf(first.db, key)).toBe(1);
  });

  it.skipIf(!onPostgres)(
    'replays racing after the lease: one takes the record over, the others are told to wait, none records again',
    async () => {
      const key = `restart-race-${randomUUID()}`;
      const input = { amount: 700 };
      const dead = new Process(first.db, clock);
      const opened = await dead.open(userId, key, input, clock.now());
      const recorded = (opened as { opened: Operation }).opened;
      clock.advance(PROVIDER_CALL_LEASE_MS + 1_000);

      const processes = Array.from({ length: 6 }, (_, i) => new Process(i % 2 ? first.db : second.db, clock));
      const outcomes = await Promise.all(
        processes.map((p) =>
          p.open(userId, key, input, clock.now()).then(
            (value) => ({ value }),
            (error: { code?: string }) => ({ error: error.code }),
          ),
        ),
      );
      const takers = outcomes.filter((o) => 'value' in o);
      expect(takers).toHaveLength(1);
      expect(takers[0]!.value).toMatchObject({ resumed: recorded });
      expect(outcomes.filter((o) => 'error' in o).map((o) => o.error)).toEqual(Array(5).fill('CONFLICT'));
      expect(processes.reduce((n, p) => n + p.opens, 0)).toBe(0);
      expect(await keyRow(first.db, key)).toMatchObject({ status: 'running', resource_id: recorded.id });
      expect(await recordsOf(first.db, key)).toBe(1);
      // The taker answers; a retry after the race replays that answer.
      await first.db.transaction((tx) => answer(tx, (takers[0]!.value as { ref: KeyRef }).ref, recorded));
      expect(await new Process(second.db, clock).open(userId, key, input, clock.now())).toEqual({ done: recorded });
    },
  );
});
