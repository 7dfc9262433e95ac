import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { spawnTs } from '../helpers/child.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

/**
 * On PostgreSQL the application connects as a role that does not own the tables: it may post to
 * the ledger, but UPDATE, DELETE and TRUNCATE of posted rows are refused by privilege (42501),
 * before the append-only trigger is even reached.
 */
describe.skipIf(!onPostgres)('the application role on PostgreSQL', () => {
  const role = `gateway_app_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  let ownerUrl: string;
  let owner: DatabaseHandle;
  let app: DatabaseHandle;
  let userId: string;

  beforeAll(async () => {
    ownerUrl = await isolatedTestDatabaseUrl();
    owner = await openDatabase({ databaseUrl: ownerUrl, poolSize: 2 });
    await owner.db.execute(sql.raw(`create role ${role} login`));
    const [user] = await queryRows<{ id: string }>(
      owner.db,
      sql`insert into users (email) values (${`${role}@example.com`}) returning id`,
    );
    userId = user!.id;
    const appUrl = new URL(ownerUrl);
    appUrl.username = role;
    // The app's start-up path: migrate through the owner's URL, which grants the application role.
    app = await openDatabase({ databaseUrl: appUrl.toString(), migrationUrl: ownerUrl, poolSize: 2 });
  });
  afterAll(async () => {
    await app?.close();
    // Roles are cluster-wide: leave none behind.
    await owner?.db.execute(sql.raw(`drop owned by ${role}`));
    await owner?.db.execute(sql.raw(`drop role ${role}`));
    await owner?.close();
  });

  it('posts to the ledger but cannot update, delete or truncate posted entries and postings', async () => {
    const [who] = await queryRows<{ name: string }>(app.db, sql`select current_user as name`);
    expect(who!.name).toBe(role);
    await app.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -900n },
          { account: walletOf('sandbox', userId), amount: 900n },
        ],
      }),
    );
    expect((await ledger.balances(app.db, 'sandbox', userId)).available).toBe(900n);
    for (const statement of [
      'update ledger_entries set amount = amount + 1',
      'delete from ledger_entries',
      'truncate ledger_entries',
      'update ledger_postings set reference = reference',
      'delete from ledger_postings',
      'truncate ledger_postings cascade',
    ]) {
      await expect(app.db.execute(sql.raw(statement)), statement).rejects.toMatchObject({
        cause: expect.objectContaining({ code: '42501' }),
      });
    }
    // The owner is stopped by the trigger instead (and TRUNCATE, which row triggers miss, by its own).
    await expect(owner.db.execute(sql`truncate ledger_entries cascade`)).rejects.toThrow();
    await expect(owner.db.execute(sql`delete from ledger_entries`)).rejects.toThrow();
  });

  it('cannot write an unbalanced posting, nor switch off or drop the guard that refuses it', async () => {
    const posting = crypto.randomUUID();
    const refused = await app.db
      .transaction(async (tx) => {
        await tx.execute(
          sql`insert into ledger_postings (id, environment, kind, reference) values (${posting}, 'sandbox', 'forged', ${posting})`,
        );
        const [wallet] = await queryRows<{ id: string }>(
          tx,
          sql`select id from ledger_accounts where key = ${`sandbox:${userId}:wallet`}`,
        );
        await tx.execute(
          sql`insert into ledger_entries (posting_id, account_id, amount, balance_after) values (${posting}, ${wallet!.id}, 5, 905)`,
        );
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toMatchObject({
      cause: expect.objectContaining({ code: '23514', constraint: 'ledger_postings_balanced' }),
    });
    // Switching the triggers off takes the tables' owner; replica mode (which skips triggers) a superuser.
    for (const statement of [
      'alter table ledger_entries disable trigger ledger_entries_balanced',
      'alter table ledger_postings disable trigger all',
      'drop trigger ledger_postings_balanced on ledger_postings',
      "set session_replication_role = 'replica'",
    ]) {
      await expect(app.db.execute(sql.raw(statement)), statement).rejects.toMatchObject({
        cause: expect.objectContaining({ code: '42501' }),
      });
    }
    expect(await queryRows(owner.db, sql`select 1 from ledger_postings where id = ${posting}`)).toEqual([]);
  });

  it('the admin CLI reports a corrupted balance with exit code 4, and OK once repaired', async () => {
    const key = `sandbox:${userId}:wallet`;
    await owner.db.execute(sql`update ledger_accounts set balance = balance - 5 where key = ${key}`);
    const failed = spawnTs('scripts/admin.ts', ['ledger-check'], { DATABASE_URL: ownerUrl });
    expect(await failed.exited).toBe(4);
    expect(failed.output()).toMatch(new RegExp(`FAILED[\\s\\S]*${key}\\s+balance 895 kobo, entries 900 kobo`));

    await owner.db.execute(sql`update ledger_accounts set balance = balance + 5 where key = ${key}`);
    const clean = spawnTs('scripts/admin.ts', ['ledger-check'], { DATABASE_URL: ownerUrl });
    expect(await clean.exited).toBe(0);
    expect(clean.output()).toMatch(/Ledger check OK/);
  });
});
