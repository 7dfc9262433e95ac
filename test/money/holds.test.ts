import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import { ledgerHolds } from '../../src/db/ledger-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { captureHold, HOLD_EXPIRE_JOB, HoldExpiryHandler, placeHold } from '../../src/domain/money/holds.js';
import { failExpiredHoldTransaction } from '../../src/domain/wallet/wallet-transitions.js';
import { openPendingTransaction } from '../../src/domain/wallet/wallet-events.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { heldJob } from '../helpers/jobs.js';

describe('holds with an expiry', () => {
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

  /** A pending payout-like transaction paid for by a hold that expires in a minute. */
  async function heldPayment(userId: string, amount: bigint) {
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + 60_000);
    return t.services.db.transaction(async (tx) => {
      const pending = await openPendingTransaction(
        tx,
        { userId, environment: 'sandbox' },
        { type: 'WITHDRAWAL', amount, reference: `HOLD-${crypto.randomUUID()}`, description: null, counterparty: {} },
        now,
      );
      const holdId = await placeHold(tx, {
        environment: 'sandbox',
        userId,
        amount,
        reference: pending.reference,
        expiresAt,
        transactionId: pending.id,
      });
      return { pending, holdId, expiresAt };
    });
  }

  const expiryJob = async (holdId: string) => {
    const [row] = await t.services.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, HOLD_EXPIRE_JOB), sql`${jobs.payload}->>'holdId' = ${holdId}`));
    return row;
  };

  const failedEvents = (transactionId: string) =>
    t.services.db.execute(
      sql`select id from events where type = 'transaction.failed' and data->>'id' = ${transactionId}`,
    ) as unknown as Promise<{ rows: unknown[] }>;

  it('releases a hold past its expiry exactly once, failing its transaction with one event', async () => {
    const user = await funded(10_000n);
    const { pending, holdId, expiresAt } = await heldPayment(user.id, 4_000n);
    expect(await ledger.balances(t.services.db, 'sandbox', user.id)).toEqual({ available: 6_000n, held: 4_000n });
    // The hold queued its own expiry job, due at its expiry, in the money lane.
    const queued = await expiryJob(holdId);
    expect(queued).toMatchObject({ runAt: expiresAt, lane: 'money', tenant: user.id });

    const handler = new HoldExpiryHandler(t.services.db, clock, failExpiredHoldTransaction);
    const job = () => heldJob(t.services.db, { payload: { holdId }, tenant: user.id, runAt: expiresAt });
    // Not due yet: nothing moves, the job comes back at the expiry.
    expect(await handler.run(await job())).toEqual({ status: 'retry', at: expiresAt });
    expect((await ledger.balances(t.services.db, 'sandbox', user.id)).held).toBe(4_000n);

    clock.advance(61_000);
    expect(await handler.run(await job())).toEqual({ status: 'done' });
    expect(await handler.run(await job())).toEqual({ status: 'done' });
    expect(await ledger.balances(t.services.db, 'sandbox', user.id)).toEqual({ available: 10_000n, held: 0n });
    const [hold] = await t.services.db.select().from(ledgerHolds).where(eq(ledgerHolds.id, holdId));
    expect(hold?.status).toBe('released');
    expect(await ledger.postingId(t.services.db, 'sandbox', 'release', holdId)).toBeDefined();
    const transaction = await t.services.wallet.transaction(
      { kind: 'api_key', credentialId: 't', userId: user.id, environment: 'sandbox', abilities: new Set(['READ']) },
      pending.id,
    );
    expect(transaction.status).toBe('FAILED');
    expect((await failedEvents(pending.id)).rows).toHaveLength(1);
  });

  it('leaves a hold captured before its expiry alone', async () => {
    const user = await funded(10_000n);
    const { pending, holdId, expiresAt } = await heldPayment(user.id, 3_000n);
    expect(await t.services.db.transaction((tx) => captureHold(tx, holdId, 100n, clock.now()))).toBe(true);
    clock.advance(61_000);
    const handler = new HoldExpiryHandler(t.services.db, clock, failExpiredHoldTransaction);
    expect(
      await handler.run(await heldJob(t.services.db, { payload: { holdId }, tenant: user.id, runAt: expiresAt })),
    ).toEqual({
      status: 'done',
    });
    expect(await ledger.balances(t.services.db, 'sandbox', user.id)).toEqual({ available: 7_000n, held: 0n });
    expect(await ledger.postingId(t.services.db, 'sandbox', 'release', holdId)).toBeUndefined();
    expect((await failedEvents(pending.id)).rows).toHaveLength(0);
  });
});
