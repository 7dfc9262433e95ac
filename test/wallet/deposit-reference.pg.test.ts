import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { DomainError } from '../../src/domain/errors.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * A deposit's open statement learns whether its reference is free from the unique indexes (the
 * deposit inserted with `on conflict do nothing`, then its transaction). When the holder commits
 * while the statement waits on its row, the statement's snapshot cannot read the holder: the
 * answer is still a 409 that names the holder's transaction, and nothing of the deposit is written.
 * PostgreSQL only: the holder is a transaction left open on another connection.
 */
describe.skipIf(!onPostgres)('a deposit whose reference is taken while it is written (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  /**
   * Runs `deposit` while `hold` has written the reference in a transaction not yet committed; once
   * the deposit waits on it, the holder runs `then` (its second write) and commits.
   */
  async function whileHeld(
    hold: (reference: string) => ReturnType<typeof sql>,
    deposit: () => Promise<unknown>,
    then?: (reference: string) => ReturnType<typeof sql>,
  ) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holderId = '';
    let held = false;
    const holder = t.services.db.transaction(async (tx) => {
      const [row] = await queryRows<{ id: string }>(tx, hold(reference));
      held = true;
      await released;
      holderId = row!.id;
      if (then) holderId = (await queryRows<{ id: string }>(tx, then(reference)))[0]!.id;
    });
    // The holder's first write is in before the deposit starts.
    await waitUntil(() => held, 5_000);
    const outcome = deposit().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    // The deposit's statement is waiting on the holder's row lock before the holder commits.
    await waitUntil(async () => {
      const [row] = await queryRows<{ n: unknown }>(
        t.services.db,
        sql`select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%deposit%'`,
      );
      return Number(row!.n) > 0;
    }, 5_000);
    release();
    await holder;
    return { holderId, outcome: await outcome };
  }

  let reference = '';
  const counts = async (userId: string) => {
    const [row] = await queryRows<{ deposits: unknown; transactions: unknown }>(
      t.services.db,
      sql`select (select count(*) from deposits where user_id = ${userId}::uuid and reference = ${reference}) as deposits,
        (select count(*) from wallet_transactions where user_id = ${userId}::uuid and reference = ${reference}) as transactions`,
    );
    return { deposits: Number(row!.deposits), transactions: Number(row!.transactions) };
  };

  /** The key's row: answered (`done`) with the refusal. */
  const keyOf = async (userId: string, key: string) => {
    const [row] = await queryRows<{ status: string; response: unknown }>(
      t.services.db,
      sql`select status, response from idempotency_keys where user_id = ${userId}::uuid and key = ${key}`,
    );
    return row && { status: row.status, response: JSON.stringify(row.response) };
  };

  it('answers 409 naming a deposit that took the reference meanwhile, writes nothing and never deadlocks', async () => {
    const tenant = await seedTenant(t.services);
    reference = 'DEP-held-deposit';
    // The holder writes as a deposit's other paths do: the deposit, then (while the new deposit
    // waits) its transaction. A statement writing the transaction first would hold that row and
    // wait for the deposit's: a deadlock, answered 500.
    const { holderId, outcome } = await whileHeld(
      (ref) => sql`insert into deposits (user_id, environment, reference, method, amount, provider)
        values (${tenant.user.id}::uuid, 'sandbox', ${ref}, 'bank_transfer', 1000, 'sandbox') returning id`,
      () => t.services.deposits.bankTransfer(principalOf(tenant.user.id), { amount: 12, reference }, 'key-held-1'),
      (ref) => sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference)
        values (${tenant.user.id}::uuid, 'sandbox', 'DEPOSIT', 'PENDING', 1000, ${ref}) returning id`,
    );
    expect('error' in outcome && outcome.error).toBeInstanceOf(DomainError);
    const error = (outcome as { error: DomainError }).error;
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain(holderId);
    expect(await counts(tenant.user.id)).toEqual({ deposits: 1, transactions: 1 });
    expect(await keyOf(tenant.user.id, 'key-held-1')).toEqual({
      status: 'done',
      response: expect.stringContaining(holderId),
    });
  });

  it('answers 409 naming another kind of transaction that took the reference meanwhile, and writes nothing', async () => {
    const tenant = await seedTenant(t.services);
    reference = 'DEP-held-transfer';
    const { holderId, outcome } = await whileHeld(
      (ref) => sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference)
        values (${tenant.user.id}::uuid, 'sandbox', 'TRANSFER_OUT', 'COMPLETED', 1000, ${ref}) returning id`,
      () => t.services.deposits.bankTransfer(principalOf(tenant.user.id), { amount: 12, reference }, 'key-held-2'),
    );
    const error = (outcome as { error: DomainError }).error;
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain(holderId);
    expect(await counts(tenant.user.id)).toEqual({ deposits: 0, transactions: 1 });
    expect(await keyOf(tenant.user.id, 'key-held-2')).toEqual({
      status: 'done',
      response: expect.stringContaining(holderId),
    });

    // The key keeps the refusal: with the holder gone, the same request is still answered by it.
    await t.services.db.execute(sql`delete from wallet_transactions where id = ${holderId}::uuid`);
    const again = await t.services.deposits
      .bankTransfer(principalOf(tenant.user.id), { amount: 12, reference }, 'key-held-2')
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(DomainError);
    expect((again as DomainError).message).toContain(holderId);
    expect(await counts(tenant.user.id)).toEqual({ deposits: 0, transactions: 0 });
  });
});
