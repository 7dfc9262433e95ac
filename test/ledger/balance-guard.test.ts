import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Database, type Executor, queryRows } from '../../src/db/client.js';
import { databaseFaultOf } from '../../src/db/faults.js';
import { causesOf } from '../../src/db/sql-state.js';
import { inTransaction, runStatement, statement } from '../../src/db/plain-sql.js';
import { restErrorReply, toDomainError } from '../../src/domain/error-mapping.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { testDatabase } from '../helpers/database.js';

/** The name the guard's error carries (migration 0031), with SQLSTATE 23514, check_violation. */
const GUARD = 'ledger_postings_balanced';

/**
 * The database itself keeps every posting balanced, whatever code writes it: raw SQL through the
 * application's own client, around ledger.post, is refused at commit when a posting it touched has
 * fewer than two entries or entries that do not sum to zero, and the whole transaction is undone.
 * Runs on PGlite and on PostgreSQL.
 */
describe('the database guard on posting balance', () => {
  let db: Database;
  let wallet: string;
  let clearing: string;

  beforeAll(async () => {
    db = (await testDatabase()).db;
    const [user] = await queryRows<{ id: string }>(
      db,
      sql`insert into users (email) values (${`guard-${crypto.randomUUID()}@example.com`}) returning id`,
    );
    wallet = await ledger.accountId(db, walletOf('sandbox', user!.id));
    clearing = await ledger.accountId(db, { ...systemAccount('sandbox', 'provider_clearing'), shard: 0 });
  });

  const insertPosting = async (tx: Executor, id: string = crypto.randomUUID()) => {
    await tx.execute(
      sql`insert into ledger_postings (id, environment, kind, reference) values (${id}, 'sandbox', 'forged', ${id})`,
    );
    return id;
  };
  /** An entry that also moves its account's balance, as the posting paths do, so a committed one leaves the books consistent. */
  const insertEntry = async (tx: Executor, postingId: string, accountId: string, amount: number) => {
    await tx.execute(sql`with moved as (
        update ledger_accounts set balance = balance + ${amount}::bigint where id = ${accountId} returning balance
      )
      insert into ledger_entries (posting_id, account_id, amount, balance_after)
      select ${postingId}, ${accountId}, ${amount}::bigint, balance from moved`);
  };
  const postingsWritten = async (ids: string[]) =>
    (
      await queryRows<{ n: number }>(
        db,
        sql`select count(*)::int as n from ledger_postings where id in ${sql.raw(`(${ids.map((id) => `'${id}'`).join(', ')})`)}`,
      )
    )[0]!.n;
  const balanceOf = async (accountId: string) =>
    BigInt(
      (
        await queryRows<{ balance: string }>(db, sql`select balance::text from ledger_accounts where id = ${accountId}`)
      )[0]!.balance,
    );

  /** The database's refusal inside what a driver threw (Drizzle wraps it on PostgreSQL, not at PGlite's COMMIT). */
  const refusalIn = (error: unknown) => [...causesOf(error)].find((e) => 'code' in e && 'severity' in e);
  /** The outcome of `write`: the guard's refusal (SQLSTATE 23514 under its own name), or 'committed'. */
  const outcomeOf = (write: Promise<unknown>) =>
    write.then(
      () => 'committed',
      (error: unknown) => refusalIn(error) ?? error,
    );
  const refusedByGuard = expect.objectContaining({ code: '23514', constraint: GUARD });

  it('refuses an unbalanced posting written around the ledger module at commit, writing nothing', async () => {
    const before = await balanceOf(wallet);
    let posting = '';
    let statementsAccepted = false;
    const refusal = await outcomeOf(
      db.transaction(async (tx) => {
        posting = await insertPosting(tx);
        await insertEntry(tx, posting, clearing, -700);
        await insertEntry(tx, posting, wallet, 701);
        // Each statement was accepted: the guard waits for the transaction's end.
        statementsAccepted = true;
      }),
    );
    expect(statementsAccepted).toBe(true);
    expect(refusal).toEqual(refusedByGuard);
    expect((refusal as Error).message).toBe(`ledger posting ${posting} is unbalanced: 2 entries summing to 1 kobo`);
    expect(await postingsWritten([posting])).toBe(0);
    expect(await balanceOf(wallet)).toBe(before);
  });

  it('lets a balanced posting written the same way through', async () => {
    const before = await balanceOf(wallet);
    const posting = await db.transaction(async (tx) => {
      const id = await insertPosting(tx);
      await insertEntry(tx, id, clearing, -700);
      await insertEntry(tx, id, wallet, 700);
      return id;
    });
    expect(await postingsWritten([posting])).toBe(1);
    expect(await balanceOf(wallet)).toBe(before + 700n);
  });

  it('undoes a whole transaction of several postings when one of them is unbalanced', async () => {
    const before = await balanceOf(wallet);
    const ids: string[] = [];
    const refusal = await outcomeOf(
      db.transaction(async (tx) => {
        for (const amount of [300, 400]) {
          const id = await insertPosting(tx);
          ids.push(id);
          await insertEntry(tx, id, clearing, -amount);
          await insertEntry(tx, id, wallet, amount);
        }
        const unbalanced = await insertPosting(tx);
        ids.push(unbalanced);
        await insertEntry(tx, unbalanced, clearing, -500);
        await insertEntry(tx, unbalanced, wallet, 400);
      }),
    );
    expect(refusal).toEqual(refusedByGuard);
    expect(ids).toHaveLength(3);
    expect(await postingsWritten(ids)).toBe(0);
    expect(await balanceOf(wallet)).toBe(before);
  });

  it('refuses a posting with no entries, or with one, and an entry added to a posting committed before', async () => {
    expect(await outcomeOf(db.transaction(async (tx) => void (await insertPosting(tx))))).toEqual(refusedByGuard);
    expect(
      await outcomeOf(
        db.transaction(async (tx) => {
          // One entry of nothing sums to zero, but moves nothing to anywhere.
          await insertEntry(tx, await insertPosting(tx), wallet, 0);
        }),
      ),
    ).toEqual(refusedByGuard);

    const posting = await db.transaction(async (tx) => {
      const id = await insertPosting(tx);
      await insertEntry(tx, id, clearing, -250);
      await insertEntry(tx, id, wallet, 250);
      return id;
    });
    const before = await balanceOf(wallet);
    expect(await outcomeOf(db.transaction((tx) => insertEntry(tx, posting, wallet, 1)))).toEqual(refusedByGuard);
    expect(
      await outcomeOf(
        db.transaction(async (tx) => {
          await insertEntry(tx, posting, wallet, 5);
          await insertEntry(tx, posting, clearing, -4);
        }),
      ),
    ).toEqual(refusedByGuard);
    expect(await balanceOf(wallet)).toBe(before);
  });

  it('refuses an unbalanced posting in one autocommit statement and in a plain-SQL transaction, as the one-statement writes run', async () => {
    const before = await balanceOf(wallet);
    const forged = statement(
      'testForgedPosting',
      `with posting as (
         insert into ledger_postings (id, environment, kind, reference) values ($1::uuid, 'sandbox', 'forged', $1::text)
       ),
       moved as (
         update ledger_accounts set balance = balance + 900 where id = $2::uuid returning id, balance
       )
       insert into ledger_entries (posting_id, account_id, amount, balance_after)
       select $1::uuid, id, 900, balance from moved`,
    );
    const alone = crypto.randomUUID();
    expect(await outcomeOf(runStatement(db, forged, [alone, wallet]))).toEqual(refusedByGuard);
    const inOne = crypto.randomUUID();
    const failure = await inTransaction(db, (run) => run(forged, [inOne, wallet])).then(
      () => undefined,
      (error: unknown) => error,
    );
    // Refused at COMMIT, not in the statement: the runner says where.
    expect(failure).toMatchObject({ phase: 'commit' });
    expect(refusalIn(failure)).toEqual(refusedByGuard);
    expect(await postingsWritten([alone, inOne])).toBe(0);
    expect(await balanceOf(wallet)).toBe(before);
  });

  it('checks at the statement instead when a writer makes it immediate', async () => {
    let posting = '';
    let reachedEnd = false;
    const refusal = await outcomeOf(
      db.transaction(async (tx) => {
        await tx.execute(sql`set constraints all immediate`);
        posting = crypto.randomUUID();
        await insertPosting(tx, posting);
        reachedEnd = true;
      }),
    );
    expect(refusal).toEqual(refusedByGuard);
    expect(reachedEnd).toBe(false);
    expect(posting).not.toBe('');
    expect(await postingsWritten([posting])).toBe(0);
  });

  it("is the service's fault, never the caller's: 500, not a 4xx, and not a database outage", async () => {
    const failure = await db
      .transaction(async (tx) => insertEntry(tx, await insertPosting(tx), wallet, 1))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refusalIn(failure)).toEqual(refusedByGuard);
    expect(databaseFaultOf(failure)).toBeUndefined();
    const mapped = toDomainError(failure);
    expect(mapped.code).toBe('INTERNAL_SERVER_ERROR');
    expect(mapped.status).toBe(500);
    expect(restErrorReply(mapped).status).toBe(500);
  });

  it('is deferred to commit on both tables', async () => {
    const triggers = await queryRows<{ table: string; name: string; deferrable: boolean; deferred: boolean }>(
      db,
      sql`select c.relname as table, t.tgname as name, t.tgdeferrable as deferrable, t.tginitdeferred as deferred
          from pg_trigger t join pg_class c on c.oid = t.tgrelid
          where t.tgfoid = 'ledger_check_posting_balanced'::regproc
          order by c.relname`,
    );
    expect(triggers).toEqual([
      { table: 'ledger_entries', name: 'ledger_entries_balanced', deferrable: true, deferred: true },
      { table: 'ledger_postings', name: 'ledger_postings_balanced', deferrable: true, deferred: true },
    ]);
  });
});
