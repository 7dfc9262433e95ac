import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import { testClocks } from '../../src/db/sandbox-schema.js';
import { type Clock, systemClock, TestClockTime } from '../../src/domain/clock.js';
import { openDeposit, startDeposit } from '../../src/domain/wallet/deposit-writes.js';
import { depositTransaction, initiatedDeposit } from '../../src/domain/wallet/deposit-rows.js';
import { pendingTransactionRow } from '../../src/domain/wallet/wallet-events.js';
import type { DepositRow } from '../../src/domain/wallet/deposit-store.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant, type Tenant } from '../helpers/app.js';

const HOUR_MS = 3_600_000;

/**
 * A deposit's two one-statement writes queue jobs. Only an account on a test clock needs its due
 * times moved by the clock's offset (read from test_clocks under a share lock); production keys
 * never have a clock, and their writes must not pay that lookup with a null id.
 */
describe('a deposit’s one-statement writes and test clocks', () => {
  let services: Services;
  let tenant: Tenant;
  /** The text of every statement the database ran since the spy was set. */
  let texts: string[] = [];

  beforeAll(async () => {
    services = await createTestServices();
    tenant = await seedTenant(services);
  });
  afterEach(() => vi.restoreAllMocks());

  const spyStatements = () => {
    texts = [];
    const client = (services.db as unknown as { $client: { query: (...args: unknown[]) => unknown } }).$client;
    const query = client.query.bind(client);
    vi.spyOn(client, 'query').mockImplementation((first: unknown, ...rest: unknown[]) => {
      texts.push(typeof first === 'string' ? first : String((first as { text?: string }).text ?? ''));
      return query(first, ...rest);
    });
  };

  /** Opens a deposit on `clock` and starts it, both due times an hour on; its jobs as written. */
  async function openAndStart(environment: 'production' | 'sandbox', clock: Clock) {
    const at = clock.now();
    const later = new Date(at.getTime() + HOUR_MS);
    const pending = initiatedDeposit(
      {
        id: randomUUID(),
        userId: tenant.user.id,
        environment,
        reference: `DEP-${randomUUID()}`,
        method: 'bank_transfer',
        paymentMethodId: null,
        amount: 500_000n,
        currency: 'NGN',
        provider: 'flutterwave',
        redirectUrl: null,
        narration: null,
        meta: null,
        customer: null,
      },
      randomUUID(),
      at,
    );
    const opened = await openDeposit(services.db, {
      deposit: pending,
      transaction: pendingTransactionRow(pending, depositTransaction(pending), pending.createdAt),
      reconcileAt: later,
      leaseUntil: later,
      clock,
      key: null,
    });
    if (!('opened' in opened)) throw new Error('The deposit did not open.');
    const deposit: DepositRow = opened.opened;
    const started = await startDeposit(services.db, {
      deposit,
      changes: {
        providerRef: `flw-${randomUUID()}`,
        accountNumber: '0123456789',
        bankName: 'Test Bank',
        accountName: 'Ada Obi',
        expiresAt: later,
        narration: null,
        nextAction: null,
      },
      stage: 'awaiting_transfer',
      at,
      expireAt: later,
      arrivalAt: null,
      key: null,
      clock,
    });
    expect(started?.status).toBe('pending');
    const written = await services.db
      .select({ kind: jobs.kind, runAt: jobs.runAt, testClockId: jobs.testClockId })
      .from(jobs)
      .where(sql`${jobs.payload}->>'depositId' = ${deposit.id}`);
    return { later, written };
  }

  const depositStatements = () => texts.filter((text) => /\b(insert into|update) deposits\b/.test(text));

  it('writes a production deposit’s jobs at their time, without reading test_clocks', async () => {
    spyStatements();
    const { later, written } = await openAndStart('production', systemClock);
    expect(depositStatements()).toHaveLength(2);
    for (const text of depositStatements()) expect(text).not.toMatch(/test_clocks/);
    expect(written.map((j) => [j.kind, j.runAt.getTime(), j.testClockId]).sort()).toEqual([
      ['deposit.expire', later.getTime(), null],
      ['deposit.reconcile', later.getTime(), null],
    ]);
  });

  it('writes a clocked sandbox deposit’s jobs in wall time, by the clock’s offset as its row stands', async () => {
    const [clock] = await services.db
      .insert(testClocks)
      .values({ userId: tenant.user.id, environment: 'sandbox', name: 'deposits', offsetMs: 2 * HOUR_MS })
      .returning();
    try {
      spyStatements();
      // Read before an advance moved the clock an hour on: the row's offset is the one that counts.
      const { later, written } = await openAndStart('sandbox', new TestClockTime(systemClock, clock!.id, HOUR_MS));
      expect(depositStatements()).toHaveLength(2);
      for (const text of depositStatements()) expect(text).toMatch(/from test_clocks/);
      const wall = later.getTime() - 2 * HOUR_MS;
      expect(written.map((j) => [j.kind, j.runAt.getTime(), j.testClockId]).sort()).toEqual([
        ['deposit.expire', wall, clock!.id],
        ['deposit.reconcile', wall, clock!.id],
      ]);
    } finally {
      await services.db.delete(jobs).where(eq(jobs.testClockId, clock!.id));
      await services.db.delete(testClocks).where(eq(testClocks.id, clock!.id));
    }
  });
});
