import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerHolds, ledgerPostings } from '../../src/db/ledger-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { captureHold, HoldExpiryHandler, placeHold, releaseHold } from '../../src/domain/money/holds.js';
import { failExpiredHoldTransaction } from '../../src/domain/wallet/wallet-transitions.js';
import { openPendingTransaction } from '../../src/domain/wallet/wallet-events.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { heldJob } from '../helpers/jobs.js';

/**
 * Holds promise that a capture racing the hold's expiry job settles it once: the guarded UPDATE on
 * the hold's status picks one winner. Only real concurrent transactions (PostgreSQL) can attack it.
 */
describe.skipIf(!onPostgres)('a hold settled by two transactions at once', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(() => t.close());

  async function funded(amount: bigint) {
    const { user } = await seedTenant(t.services);
    await t.services.db.transaction((tx) =>
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
    return user;
  }

  /** A pending payment paid for by a hold that is already due to expire. */
  async function duePayment(userId: string, amount: bigint) {
    const now = clock.now();
    return t.services.db.transaction(async (tx) => {
      const pending = await openPendingTransaction(
        tx,
        { userId, environment: 'sandbox' },
        { type: 'WITHDRAWAL', amount, reference: `RACE-${crypto.randomUUID()}`, description: null, counterparty: {} },
        now,
      );
      const holdId = await placeHold(tx, {
        environment: 'sandbox',
        userId,
        amount,
        reference: pending.reference,
        expiresAt: now,
        transactionId: pending.id,
      });
      return { pending, holdId };
    });
  }

  const postings = async (holdId: string, kind: string) =>
    (
      await t.services.db
        .select({ id: ledgerPostings.id })
        .from(ledgerPostings)
        .where(and(eq(ledgerPostings.kind, kind), eq(ledgerPostings.reference, holdId)))
    ).length;

  const failedEvents = async (transactionId: string) =>
    (
      (await t.services.db.execute(
        sql`select id from events where type = 'transaction.failed' and data->>'id' = ${transactionId}`,
      )) as unknown as { rows: unknown[] }
    ).rows.length;

  const holdStatus = async (holdId: string) =>
    (await t.services.db.select().from(ledgerHolds).where(eq(ledgerHolds.id, holdId)))[0]?.status;

  it('lets exactly one of a capture and the expiry job win, with exact balances and one set of events', async () => {
    const handler = new HoldExpiryHandler(t.services.db, clock, failExpiredHoldTransaction);
    const outcomes = { captured: 0, released: 0 };
    for (let round = 0; round < 25; round++) {
      const user = await funded(10_000n);
      const { pending, holdId } = await duePayment(user.id, 4_000n);
      const job = await heldJob(t.services.db, { payload: { holdId }, tenant: user.id, runAt: clock.now() });
      const [expired, captured] = await Promise.all([
        handler.run(job),
        t.services.db.transaction((tx) => captureHold(tx, holdId, 100n, clock.now())),
      ]);
      expect(expired).toEqual({ status: 'done' });
      const status = await holdStatus(holdId);
      const balances = await ledger.balances(t.services.db, 'sandbox', user.id);
      if (captured) {
        outcomes.captured++;
        expect(status).toBe('captured');
        expect(balances).toEqual({ available: 6_000n, held: 0n });
        expect(await postings(holdId, 'capture')).toBe(1);
        expect(await postings(holdId, 'release')).toBe(0);
        expect(await failedEvents(pending.id)).toBe(0);
      } else {
        outcomes.released++;
        expect(status).toBe('released');
        expect(balances).toEqual({ available: 10_000n, held: 0n });
        expect(await postings(holdId, 'capture')).toBe(0);
        expect(await postings(holdId, 'release')).toBe(1);
        expect(await failedEvents(pending.id)).toBe(1);
      }
    }
    expect(outcomes.captured + outcomes.released).toBe(25);
  });
  it('settles a hold once when captureHold or releaseHold is called twice at the same time', async () => {
    const settle = {
      capture: (holdId: string) => t.services.db.transaction((tx) => captureHold(tx, holdId, 100n, clock.now())),
      release: (holdId: string) => t.services.db.transaction((tx) => releaseHold(tx, holdId, clock.now())),
    };
    for (const [first, second] of [
      ['capture', 'capture'],
      ['release', 'release'],
      ['capture', 'release'],
    ] as const) {
      for (let round = 0; round < 10; round++) {
        const user = await funded(10_000n);
        const { holdId } = await duePayment(user.id, 4_000n);
        const results = await Promise.all([settle[first](holdId), settle[second](holdId)]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results[0] ? first : second;
        expect(await holdStatus(holdId)).toBe(winner === 'capture' ? 'captured' : 'released');
        expect(await postings(holdId, 'capture')).toBe(winner === 'capture' ? 1 : 0);
        expect(await postings(holdId, 'release')).toBe(winner === 'release' ? 1 : 0);
        expect(await ledger.balances(t.services.db, 'sandbox', user.id)).toEqual({
          available: winner === 'capture' ? 6_000n : 10_000n,
          held: 0n,
        });
      }
    }
  });
});
