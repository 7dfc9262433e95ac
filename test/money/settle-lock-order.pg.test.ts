import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import type { BillRecordRow } from '../../src/domain/bills/bill-record.js';
import { BILL_HELD } from '../../src/domain/bills/bill-lifecycle.js';
import { settleInOneStatement } from '../../src/domain/money/held-operation.js';
import { HELD_WALLET } from '../../src/domain/wallet/held-wallet.js';
import { SANDBOX_BILLS } from '../../src/domain/bills/sandbox-bills-provider.js';
import { type AccountRef, holdsOf, ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The settle statement of a held operation (money/settle-held.ts) locks every account it moves in id
 * order, as ledger.post does, so it cannot deadlock against a posting on the same accounts whatever
 * order either lists them in. Raced many times against postings that list the same accounts the
 * other way round: no deadlock (40P01) and every balance exact. Only real concurrent transactions
 * (PostgreSQL) can attack it.
 */
const ROUNDS = 15;
const PER_ROUND = 4;

describe.skipIf(!onPostgres)('the settle statement against postings on the same accounts', () => {
  let t: TestApp;
  // Each settle of a round on a pool of its own: it runs as its one statement (a pool's concurrent
  // writes would share a batch, which locks the accounts in a statement of its own first).
  const pools: DatabaseHandle[] = [];
  beforeAll(async () => {
    t = await createTestApp();
    for (let i = 0; i < PER_ROUND; i++) pools.push(await openDatabase({ databaseUrl: testDatabaseUrl(), poolSize: 2 }));
  });
  afterAll(async () => {
    for (const pool of pools) await pool.close();
    await t.close();
  });

  const DECLINED = { status: 'FAILED', txRef: null, reason: 'declined', providerData: {} } as const;
  const PAID = { status: 'SUCCESS', txRef: 'PAID', providerData: {} } as const;
  /** One settle statement on a pool of its own (not batched with the test's other writes). */
  const settleAlone = (
    record: BillRecordRow,
    accounts: Awaited<ReturnType<typeof fundedUser>>['accounts'],
    outcome: typeof DECLINED | typeof PAID,
  ) =>
    settleInOneStatement(pools[0]!.db, BILL_HELD, HELD_WALLET, record, outcome, {
      at: new Date(),
      accounts,
      key: null,
    });

  /** A tenant funded with `amount` kobo, and the account ids a settle of its holds meets, on one shard. */
  const fundedUser = async (amount: bigint, shard: number) => {
    const { user } = await seedTenant(t.services);
    const db = t.services.db;
    await db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test-funding',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -amount },
          { account: walletOf('sandbox', user.id), amount },
        ],
      }),
    );
    const clearing = { ...systemAccount('sandbox', 'provider_clearing'), shard };
    const fees = { ...systemAccount('sandbox', 'fees'), shard };
    const accounts = {
      holds: await ledger.cachedAccountId(db, holdsOf('sandbox', user.id)),
      wallet: await ledger.cachedAccountId(db, walletOf('sandbox', user.id)),
      clearing: await ledger.cachedAccountId(db, clearing),
      fees: await ledger.cachedAccountId(db, fees),
    };
    return { user, db, principal: principalOf(user.id), clearing, fees, accounts };
  };

  it('captures and releases while postings touch the same accounts in the opposite order: no deadlock, exact balances', async () => {
    // One shard each, so every settle and every posting meets on the same rows.
    const { user, db, principal, clearing, fees, accounts } = await fundedUser(10_000_000n, 3);
    // The system shards are shared with other test files: what this test moved there is read from
    // its own postings' entries (the race postings, and the captures of its bills' holds).
    const references: string[] = [];
    const movedHere = async (id: string) =>
      BigInt(
        (
          await queryRows<{ b: string }>(
            db,
            sql`select coalesce(sum(e.amount), 0)::text as b from ledger_entries e join ledger_postings p on p.id = e.posting_id
                where e.account_id = ${id} and p.reference = any(${`{${references.join(',')}}`}::text[])`,
          )
        )[0]!.b,
      );
    const before = {
      wallet: (await ledger.balances(db, 'sandbox', user.id)).available,
    };
    let captured = 0n;
    let capturedFees = 0n;
    let moved = 0n;
    const errors: unknown[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Bills the provider has not answered: PENDING, their money held.
      const records = [];
      for (let i = 0; i < PER_ROUND; i++)
        records.push(
          await t.services.bills.pay(
            principal,
            { type: 'AIRTIME', biller: 'MTN', customer: SANDBOX_BILLS.delayedCustomer, amount: 100 + i },
            undefined,
          ),
        );
      expect(records.every((r) => r.status === 'PENDING')).toBe(true);
      const at = new Date();
      // Postings listing the settle's accounts the other way round (the settle's lines run holds →
      // clearing → fees, or holds → wallet): fees → clearing → wallet, and wallet → clearing.
      const post = (lines: Array<{ account: AccountRef; amount: bigint }>) =>
        db.transaction((tx) =>
          ledger.post(tx, {
            environment: 'sandbox',
            kind: 'test-race',
            reference: references[references.push(crypto.randomUUID()) - 1]!,
            lines,
          }),
        );
      const walletRef = walletOf('sandbox', user.id);
      const settles = records.map((record, i) =>
        settleInOneStatement(
          pools[i]!.db,
          BILL_HELD,
          HELD_WALLET,
          record,
          (round + i) % 2 === 0
            ? { status: 'SUCCESS', txRef: `RACE-${round}-${i}`, providerData: {} }
            : { status: 'FAILED', txRef: null, reason: 'declined', providerData: {} },
          { at, accounts, key: null },
        ),
      );
      const posts = records.flatMap(() => [
        post([
          { account: fees, amount: 1n },
          { account: clearing, amount: 1n },
          { account: walletRef, amount: -2n },
        ]),
        post([
          { account: walletRef, amount: -1n },
          { account: clearing, amount: 1n },
        ]),
      ]);
      const results = await Promise.allSettled([...settles, ...posts]);
      for (const r of results) if (r.status === 'rejected') errors.push(r.reason);
      for (const [i, record] of records.entries()) {
        const capture = (round + i) % 2 === 0;
        const result = results[i]!;
        const settled = result.status === 'fulfilled' ? (result.value as { status: string } | undefined) : undefined;
        expect(settled?.status).toBe(capture ? 'SUCCESS' : 'FAILED');
        references.push(record.holdId!);
        if (capture) {
          captured += BigInt(record.amount);
          capturedFees += BigInt(record.fee);
        }
        moved += 3n;
      }
    }
    expect(errors.map((e) => (e as { code?: string }).code ?? String(e))).toEqual([]);
    expect(await ledger.balances(db, 'sandbox', user.id)).toEqual({
      available: before.wallet - captured - capturedFees - moved,
      held: 0n,
    });
    expect(await movedHere(accounts.clearing)).toBe(captured + 2n * BigInt(ROUNDS * PER_ROUND));
    expect(await movedHere(accounts.fees)).toBe(capturedFees + BigInt(ROUNDS * PER_ROUND));
    expect(await ledger.totalOf(db, 'sandbox')).toBe(0n);
  });

  it('a release queued behind a lock on its higher account, then a posting locking the lower one: no deadlock', async () => {
    // Deterministic: a blocker holds the higher-id of the wallet and holds accounts (the two a
    // release moves); the settle queues for it
    // (had it locked in any other order it would hold the lower one by then); a posting then takes
    // the lower one and queues for the higher. When the blocker lets go, a settle holding the lower
    // row would wait for the posting while the posting waits for it: PostgreSQL's deadlock error.
    const { user, db, principal, accounts } = await fundedUser(1_000_000n, 5);
    // uuids compare as their lowercase text does.
    const higher = [accounts.wallet, accounts.holds].sort()[1]!;
    const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
    const blockerPid = (await blocker.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    // Until n backends queue behind the blocker (or 10 s: then the race runs as it stands).
    const waitingOnBlocker = async (n: number) => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        // Waiting for the blocker, or for a backend that waits for it.
        const { rows } = await blocker.query(
          `with w as (select pid from pg_stat_activity where $1::int = any(pg_blocking_pids(pid)))
           select (select count(*) from w)::int
             + (select count(*) from pg_stat_activity a
                where a.pid not in (select pid from w) and exists (select 1 from w where w.pid = any(pg_blocking_pids(a.pid))))::int as n`,
          [blockerPid],
        );
        if (rows[0].n >= n) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    try {
      for (let round = 0; round < 3; round++) {
        const record = await t.services.bills.pay(
          principal,
          { type: 'AIRTIME', biller: 'MTN', customer: SANDBOX_BILLS.delayedCustomer, amount: 100 },
          undefined,
        );
        await blocker.query('begin');
        await blocker.query('select id from ledger_accounts where id = $1 for update', [higher]);
        const settled = settleAlone(record, accounts, DECLINED);
        await waitingOnBlocker(1);
        const posted = db.transaction((tx) =>
          ledger.post(tx, {
            environment: 'sandbox',
            kind: 'test-race',
            reference: crypto.randomUUID(),
            lines: [
              { account: holdsOf('sandbox', user.id), amount: 1n },
              { account: walletOf('sandbox', user.id), amount: -1n },
            ],
          }),
        );
        await waitingOnBlocker(2);
        await blocker.query('commit');
        const results = await Promise.allSettled([settled, posted]);
        expect(
          results.map((r) =>
            r.status === 'rejected' ? ((r.reason as { code?: string }).code ?? String(r.reason)) : 'ok',
          ),
        ).toEqual(['ok', 'ok']);
        expect((results[0] as PromiseFulfilledResult<{ status: string } | undefined>).value?.status).toBe('FAILED');
      }
    } finally {
      await blocker.end();
    }
    expect(await ledger.balances(db, 'sandbox', user.id)).toEqual({
      available: 1_000_000n - 3n,
      held: 3n,
    });
    expect(await ledger.totalOf(db, 'sandbox')).toBe(0n);
  });

  it('a settle waiting for its accounts leaves the row unchanged, so an open of the same reference is refused at once, not queued into a deadlock', async () => {
    // Deterministic. An open of a bill holds the owner's wallet and holds accounts while its insert
    // checks the unique reference; a check that meets a row some transaction has UPDATED (not merely
    // locked) waits for that transaction. A settle that moved the row before locking the accounts
    // would then wait for the open's accounts while the open waits for it: PostgreSQL's deadlock
    // error, one of the two answered 500. Here a blocker holds one account the settle needs; while
    // the settle waits, an insert of the row's reference must fail on the index at once.
    const { principal, db, accounts } = await fundedUser(1_000_000n, 6);
    const record = await t.services.bills.pay(
      principal,
      { type: 'AIRTIME', biller: 'MTN', customer: SANDBOX_BILLS.delayedCustomer, amount: 100 },
      undefined,
    );
    const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    const probe = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
    await probe.connect();
    try {
      const blockerPid = (await blocker.query('select pg_backend_pid() as pid')).rows[0].pid as number;
      await blocker.query('begin');
      await blocker.query('select id from ledger_accounts where id = any($1::uuid[]) for update', [
        [accounts.wallet, accounts.holds],
      ]);
      const settled = settleAlone(record, accounts, DECLINED);
      // Kept from rejecting unhandled while the probe runs; its outcome is asserted below.
      settled.catch(() => undefined);
      // The settle must be waiting for the blocker: a probe of a row no settle has reached would pass
      // whatever the settle's order.
      let waiting = false;
      for (const deadline = Date.now() + 10_000; !waiting && Date.now() < deadline; ) {
        const { rows } = await probe.query(
          'select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))',
          [blockerPid],
        );
        waiting = rows[0].n >= 1;
        if (!waiting) await new Promise((resolve) => setImmediate(resolve));
      }
      expect(waiting).toBe(true);
      await probe.query('begin');
      await probe.query("set local lock_timeout = '3s'");
      await probe.query('create temp table twin on commit drop as select * from bill_records where id = $1', [
        record.id,
      ]);
      await probe.query('update twin set id = gen_random_uuid()');
      const twin = await probe.query('insert into bill_records select * from twin').then(
        () => 'inserted',
        (error: { code?: string; constraint?: string }) => `${error.code} ${error.constraint ?? ''}`.trim(),
      );
      await probe.query('rollback');
      expect(twin).toBe('23505 bill_records_owner_reference_key');
      await blocker.query('commit');
      expect((await settled)?.status).toBe('FAILED');
    } finally {
      await blocker.end();
      await probe.end();
    }
    expect(await ledger.totalOf(db, 'sandbox')).toBe(0n);
  });

  it('a capture without a fee leaves the fees shard unlocked: a blocker holding it does not delay the settle', async () => {
    const { principal, db, accounts } = await fundedUser(1_000_000n, 7);
    const record = await t.services.bills.pay(
      principal,
      { type: 'AIRTIME', biller: 'MTN', customer: SANDBOX_BILLS.delayedCustomer, amount: 100 },
      undefined,
    );
    expect(record.fee).toBe(0n);
    const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select id from ledger_accounts where id = $1 for update', [accounts.fees]);
      const blockerPid = (await blocker.query('select pg_backend_pid() as pid')).rows[0].pid as number;
      const settled = settleAlone(record, accounts, PAID);
      let done = false;
      settled.then(
        () => (done = true),
        () => (done = true),
      );
      // Until the settle has finished or a backend queues behind the blocker.
      let waited = false;
      await waitUntil(async () => {
        const { rows } = await blocker.query(
          'select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))',
          [blockerPid],
        );
        waited = rows[0].n > 0;
        return done || waited;
      }, 10_000);
      await blocker.query('commit');
      expect(waited).toBe(false);
      expect((await settled)?.status).toBe('SUCCESS');
    } finally {
      await blocker.end();
    }
    expect(await ledger.totalOf(db, 'sandbox')).toBe(0n);
  });
});
