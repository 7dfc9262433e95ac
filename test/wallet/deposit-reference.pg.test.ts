import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { DomainError } from '../../src/domain/errors.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';
import { signal, waitUntil } from '../helpers/wait.js';

type Write = (reference: string) => ReturnType<typeof sql>;

/**
 * A deposit's open statement learns whether its reference is free from the unique indexes (the
 * deposit's insert, then its transaction's, fails on the owner's unique reference, and the refusal
 * names the holder). When the holder commits
 * while the statement waits on its row, the statement's snapshot cannot read the holder: the
 * answer is still a 409 that names the holder's transaction, the key keeps that refusal, and
 * nothing of the deposit is written. PostgreSQL only: the holder is a transaction left open on
 * another connection.
 */
describe.skipIf(!onPostgres)('a deposit whose reference is taken while it is written (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  /**
   * Starts a bank-transfer deposit of `reference` under `key` while a transaction of another
   * connection has written `hold` and not committed; once the deposit's statement waits on it, the
   * holder writes `then` (if any) and commits. The deposit's error and the id the holder's last
   * write returned.
   */
  async function depositWhileHeld(userId: string, reference: string, key: string, hold: Write, then?: Write) {
    const held = signal();
    const release = signal();
    let holderId = '';
    const holder = t.services.db.transaction(async (tx) => {
      holderId = (await queryRows<{ id: string }>(tx, hold(reference)))[0]!.id;
      held.resolve();
      await release.promise;
      if (then) holderId = (await queryRows<{ id: string }>(tx, then(reference)))[0]!.id;
    });
    await held.promise;
    const refused = deposit(userId, reference, key);
    try {
      await waitUntil(async () => {
        const [row] = await queryRows<{ n: unknown }>(
          t.services.db,
          sql`select count(*) as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like '%deposit%'`,
        );
        return Number(row!.n) > 0;
      });
    } finally {
      // Released whatever happened, so a failed wait never leaves the holder's transaction open.
      release.resolve();
      await holder;
    }
    return { error: await refused, holderId };
  }

  const deposit = (userId: string, reference: string, key: string) =>
    t.services.deposits.bankTransfer(principalOf(userId), { amount: 12, reference }, key).then(
      () => undefined,
      (error: unknown) => error,
    );

  /** A 409 naming the holder, kept as the key's answer, with `written` deposits and transactions of the reference. */
  async function expectRefused(
    error: unknown,
    o: {
      userId: string;
      reference: string;
      key: string;
      holderId: string;
      written: { deposits: number; transactions: number };
    },
  ) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('CONFLICT');
    expect((error as DomainError).message).toContain(o.holderId);
    const [row] = await queryRows<{ deposits: unknown; transactions: unknown; key: unknown }>(
      t.services.db,
      sql`select
        (select count(*) from deposits where user_id = ${o.userId}::uuid and reference = ${o.reference}) as deposits,
        (select count(*) from wallet_transactions where user_id = ${o.userId}::uuid and reference = ${o.reference}) as transactions,
        (select jsonb_build_object('status', status, 'response', response::text) from idempotency_keys
          where user_id = ${o.userId}::uuid and key = ${o.key}) as key`,
    );
    expect({ deposits: Number(row!.deposits), transactions: Number(row!.transactions) }).toEqual(o.written);
    expect(row!.key).toEqual({ status: 'done', response: expect.stringContaining(o.holderId) });
  }

  it('answers 409 naming a deposit that took the reference meanwhile, writes nothing and never deadlocks', async () => {
    const userId = (await seedTenant(t.services)).user.id;
    const reference = 'DEP-held-deposit';
    // The holder writes as a deposit's other paths do: the deposit, then (while the new deposit
    // waits) its transaction. A statement writing the transaction first would hold that row and
    // wait for the deposit's: a deadlock, answered 500.
    const { error, holderId } = await depositWhileHeld(
      userId,
      reference,
      'key-held-1',
      (ref) => sql`insert into deposits (user_id, environment, reference, method, amount, provider)
        values (${userId}::uuid, 'sandbox', ${ref}, 'bank_transfer', 1000, 'sandbox') returning id`,
      (ref) => sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference)
        values (${userId}::uuid, 'sandbox', 'DEPOSIT', 'PENDING', 1000, ${ref}) returning id`,
    );
    await expectRefused(error, {
      userId,
      reference,
      key: 'key-held-1',
      holderId,
      written: { deposits: 1, transactions: 1 },
    });
  });

  it('answers 409 naming another kind of transaction that took the reference meanwhile, and writes nothing', async () => {
    const userId = (await seedTenant(t.services)).user.id;
    const reference = 'DEP-held-transfer';
    const { error, holderId } = await depositWhileHeld(
      userId,
      reference,
      'key-held-2',
      (ref) => sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference)
        values (${userId}::uuid, 'sandbox', 'TRANSFER_OUT', 'COMPLETED', 1000, ${ref}) returning id`,
    );
    const refused = { userId, reference, key: 'key-held-2', holderId };
    await expectRefused(error, { ...refused, written: { deposits: 0, transactions: 1 } });

    // The key keeps the refusal: with the holder gone, the same request is still answered by it.
    await t.services.db.execute(sql`delete from wallet_transactions where id = ${holderId}::uuid`);
    await expectRefused(await deposit(userId, reference, 'key-held-2'), {
      ...refused,
      written: { deposits: 0, transactions: 0 },
    });
  });
});
