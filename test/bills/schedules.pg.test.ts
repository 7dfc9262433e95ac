import { and, count, eq, inArray, isNotNull, lte, or, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billRecords, billSchedules } from '../../src/db/bills-schema.js';
import { jobs } from '../../src/db/schema.js';
import { BILL_JOBS } from '../../src/domain/bills/bills-service.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import type { Services } from '../../src/services.js';
import { openDatabase } from '../../src/db/client.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import { type Child, spawnTs } from '../helpers/child.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';
import { principalOf } from '../helpers/principal.js';

describe.skipIf(!onPostgres)('scheduled bills with two worker processes (PostgreSQL)', () => {
  let services: Services;
  let databaseUrl: string;
  const workers: Child[] = [];
  // A database of its own: these worker processes would otherwise claim other files' jobs.
  beforeAll(async () => {
    databaseUrl = await isolatedTestDatabaseUrl();
    const { db } = await openDatabase({ databaseUrl, poolSize: 5 });
    services = await createTestServices(db);
  });
  afterAll(async () => {
    for (const child of workers) {
      child.process.kill('SIGKILL');
      await child.exited;
    }
  });

  it('each run of a one-off and a recurring schedule is paid exactly once', async () => {
    const tenant = await seedTenant(services);
    const principal = principalOf(tenant.user.id);
    await services.deposits.simulateVirtualAccountTransfer(principal, 1000);
    const at = new Date(Date.now() + 4000);
    const once = await services.bills.pay(
      principal,
      {
        type: 'AIRTIME',
        biller: 'MTN',
        customer: '08031234567',
        amount: 100,
        isSchedule: true,
        scheduleData: { executionDate: at.toISOString() },
      },
      undefined,
    );
    const daily = await services.bills.pay(
      principal,
      {
        type: 'AIRTIME',
        biller: 'GLO',
        customer: '08031234567',
        amount: 200,
        isSchedule: true,
        scheduleData: { executionDate: at.toISOString(), isRecurring: true, recurrencePattern: 'daily' },
      },
      undefined,
    );
    for (let i = 0; i < 2; i++) {
      const child = spawnTs('src/main.ts', [], {
        DATABASE_URL: databaseUrl,
        PORT: '0',
        HOST: '127.0.0.1',
        SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        REDIS_URL: '',
      });
      workers.push(child);
    }
    await Promise.all(workers.map((w) => w.waitFor(/listening on/, 60_000)));
    // Both runs paid, and the bill jobs idle: nothing is due until tomorrow and no worker holds a
    // claim, so no duplicate run can still be on its way when the records are counted.
    await waitUntil(
      async () => {
        const paid = await services.db
          .select()
          .from(billRecords)
          .where(and(eq(billRecords.userId, tenant.user.id), eq(billRecords.status, 'SUCCESS')));
        if (paid.length < 2) return false;
        const [busy] = await services.db
          .select({ n: count() })
          .from(jobs)
          .where(
            and(
              inArray(jobs.kind, Object.values(BILL_JOBS)),
              or(and(eq(jobs.status, 'pending'), lte(jobs.runAt, sql`now()`)), isNotNull(jobs.lockedBy)),
            ),
          );
        return Number(busy!.n) === 0;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const records = await services.db.select().from(billRecords).where(eq(billRecords.userId, tenant.user.id));
    expect(records.map((r) => [r.reference, r.status]).sort()).toEqual(
      [
        [once.reference, 'SUCCESS'],
        [daily.reference, 'SUCCESS'],
      ].sort(),
    );
    expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({ available: 70_000n, held: 0n });
    const [recurring] = await services.db.select().from(billSchedules).where(eq(billSchedules.id, daily.scheduleId!));
    expect(recurring).toMatchObject({ status: 'active', runCount: 1 });
    expect(recurring!.nextRunAt!.getTime()).toBe(at.getTime() + 86_400_000);
  }); // two server processes start (tsx compiles on the way), then the runs come due
});
