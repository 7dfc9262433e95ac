import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLedgerCheck } from '../../scripts/admin/ledger-commands.js';
import type { Database } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema.js';
import { ledgerEntries, ledgerPostings } from '../../src/db/ledger-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { LEDGER_CHECK_JOB, LedgerCheckHandler, scheduleLedgerCheck } from '../../src/domain/ledger/ledger-check-job.js';
import { LedgerCheck, ledgerCheckGauges } from '../../src/domain/ledger/ledger-check.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

describe('the ledger invariant check', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Its own database on PostgreSQL: the check reads every account, and this file corrupts one.
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  async function deposit(userId: string, amount: bigint) {
    await t.services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -amount },
          { account: walletOf('sandbox', userId), amount },
        ],
      }),
    );
  }

  it('passes on a consistent ledger and catches a hand-corrupted balance, naming the account', async () => {
    const { user } = await seedTenant(t.services);
    await deposit(user.id, 12_340n);
    const clean = await t.services.ledgerCheck.run();
    expect(clean).toMatchObject({ ok: true, mismatchedAccountCount: 0, unbalancedPostingCount: 0 });
    expect(clean.accountsChecked).toBeGreaterThanOrEqual(2);

    const key = `sandbox:${user.id}:wallet`;
    await t.services.db.execute(sql`update ledger_accounts set balance = balance + 1 where key = ${key}`);
    try {
      const caught = await t.services.ledgerCheck.run();
      expect(caught.ok).toBe(false);
      expect(caught.mismatchedAccountCount).toBe(1);
      expect(caught.mismatchedAccounts).toEqual([
        expect.objectContaining({ key, balance: '12341', entriesSum: '12340' }),
      ]);
      // Stored: any process (the admin CLI, a metrics gauge) reads the same verdict.
      const latest = await new LedgerCheck(t.services.db, t.services.clock).latest();
      expect(latest).toEqual(caught);
      expect(ledgerCheckGauges(t.services.ledgerCheck.lastKnown())).toMatchObject({ ok: 0, mismatchedAccounts: 1 });
      expect(describeLedgerCheck(caught)).toMatch(
        new RegExp(`FAILED[\\s\\S]*${key}.*balance 12341 kobo, entries 12340`),
      );
    } finally {
      await t.services.db.execute(sql`update ledger_accounts set balance = balance - 1 where key = ${key}`);
    }
    expect((await t.services.ledgerCheck.run()).ok).toBe(true);
  });

  it('catches a posting whose entries do not sum to zero', async () => {
    const { user } = await seedTenant(t.services);
    await deposit(user.id, 500n);
    const rollback = new Error('rollback');
    // Written around the posting path (which refuses it) and rolled back: entries can never be deleted.
    const result = await t.services.db
      .transaction(async (tx) => {
        const [posting] = await tx
          .insert(ledgerPostings)
          .values({ environment: 'sandbox', kind: 'forged', reference: crypto.randomUUID() })
          .returning();
        const accountId = await ledger.accountId(tx, walletOf('sandbox', user.id));
        await tx.insert(ledgerEntries).values({ postingId: posting!.id, accountId, amount: 700n, balanceAfter: 1200n });
        await tx.execute(sql`update ledger_accounts set balance = balance + 700 where id = ${accountId}`);
        const inside = await new LedgerCheck(tx as unknown as Database, t.services.clock).run();
        throw Object.assign(rollback, { inside });
      })
      .catch((error: Error & { inside?: Awaited<ReturnType<LedgerCheck['run']>> }) => error.inside);
    expect(result).toMatchObject({ ok: false, mismatchedAccountCount: 0, unbalancedPostingCount: 1 });
    expect(result!.unbalancedPostings[0]).toMatchObject({ kind: 'forged', sum: '700' });
  });

  it('runs on a schedule: one chain of jobs however often instances schedule it', async () => {
    const clock = new ManualClock(Date.UTC(2031, 0, 1));
    const check = new LedgerCheck(t.services.db, clock);
    const runner = new JobRunner(t.services.db, clock, [
      new LedgerCheckHandler(check, t.services.db, clock, 3_600_000),
    ]);
    const pending = () =>
      t.services.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, LEDGER_CHECK_JOB), eq(jobs.status, 'pending')));
    await scheduleLedgerCheck(t.services.db, clock.now());
    await scheduleLedgerCheck(t.services.db, clock.now());
    expect(await pending()).toHaveLength(1);

    expect(await runner.runDueJobs()).toBe(1);
    expect(check.lastKnown()?.finishedAt).toEqual(clock.now());
    const [next] = await pending();
    expect(next!.runAt).toEqual(new Date(clock.now().getTime() + 3_600_000));
    await scheduleLedgerCheck(t.services.db, clock.now());
    expect(await pending()).toHaveLength(1);

    expect(await runner.runDueJobs()).toBe(0);
    clock.advance(3_600_000);
    expect(await runner.runDueJobs()).toBe(1);
    expect(check.lastKnown()?.finishedAt).toEqual(clock.now());
    expect(await pending()).toHaveLength(1);
  });
});
