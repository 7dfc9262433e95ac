import { sql } from 'drizzle-orm';
import pg from 'pg';
import { queryRows } from '../../src/db/client.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant, type Tenant } from '../helpers/app.js';
import { type Child, spawnTs, killChildren } from '../helpers/child.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';
import { principalOf } from '../helpers/principal.js';

/** A gateway process SIGKILLed mid-operation leaves nothing half-written (PostgreSQL). */
describe.skipIf(!onPostgres)('crashes in the middle of money movements (PostgreSQL)', () => {
  let services: Services;
  const children: Child[] = [];
  beforeAll(async () => {
    services = await createTestServices();
  });
  afterEach(() => killChildren(children));

  async function gateway(): Promise<{ child: Child; url: string }> {
    const child = spawnTs('src/main.ts', [], {
      DATABASE_URL: testDatabaseUrl(),
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      WORKERS: 'false',
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
    });
    children.push(child);
    const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 60_000);
    return { child, url: url! };
  }

  const post = (url: string, tenant: Tenant, path: string, body: object) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.TRANSACTIONS },
      body: JSON.stringify(body),
    });

  it('a payout killed while the provider works: money held and recorded consistently, then settled by reconciliation', async () => {
    const tenant = await seedTenant(services);
    await services.deposits.simulateVirtualAccountTransfer(principalOf(tenant.user.id), 1000);
    const { child, url } = await gateway();
    // The slow sandbox account keeps the provider call open for two seconds: the kill lands inside it.
    void post(url, tenant, '/api/v1/wallet/withdraw', {
      amount: 300,
      bankCode: '044',
      accountNumber: SANDBOX_PAYMENTS.payouts.slowAccount,
      reference: 'CRASH-PO',
    }).catch(() => undefined);
    await waitUntil(
      async () => (await services.wallet.transactions(principalOf(tenant.user.id), { type: 'WITHDRAWAL' })).total === 1,
      20_000,
    );
    child.process.kill('SIGKILL');
    await child.exited;

    const payout = await services.payouts.get(principalOf(tenant.user.id), 'CRASH-PO');
    expect(payout.status).toBe('initiated');
    expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({
      available: 100_000n - 32_500n,
      held: 32_500n,
    });
    expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);

    // What the reconciliation job does after its delay: the provider never heard of it, so it is sent now.
    const settled = await services.payouts.reconcile(payout.id);
    expect(settled.status).toBe('completed');
    expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({ available: 67_500n, held: 0n });
    expect((await services.wallet.transactionByReference(principalOf(tenant.user.id), 'CRASH-PO')).status).toBe(
      'COMPLETED',
    );
  });

  it('a deposit completion killed halfway through its transaction writes nothing; completing it again credits once', async () => {
    const tenant = await seedTenant(services);
    const principal = principalOf(tenant.user.id);
    // A wallet account must exist for the blocker below to lock it.
    await services.deposits.simulateVirtualAccountTransfer(principal, 1);
    const started = await services.deposits.bankTransfer(principal, { amount: 500, reference: 'CRASH-DEP' }, undefined);
    const { child, url } = await gateway();
    // Hold the wallet's ledger row: the child's completion stops after writing its posting, inside its transaction.
    const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('select 1 from ledger_accounts where key = $1 for update', [
      `sandbox:${tenant.user.id}:wallet`,
    ]);
    try {
      // A transfer into the permanent account is a completion; the child runs it and blocks.
      const account = await services.deposits.permanentAccount(principal);
      void post(url, tenant, '/api/v1/wallet/sandbox/virtual-account/transfer', { amount: 250 }).catch(() => undefined);
      // Polled from another connection: inside the blocker's transaction the statistics view is a snapshot.
      await waitUntil(async () => {
        const [row] = await queryRows<{ n: number }>(
          services.db,
          sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and query ilike '%update "ledger_accounts"%'`,
        );
        return (row?.n ?? 0) > 0;
      }, 20_000);
      child.process.kill('SIGKILL');
      await child.exited;
      expect(account.accountNumber).toMatch(/^\d{10}$/);
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
    // The child's transaction died with it: only the first ₦1 is there, and the ledger balances.
    expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({ available: 100n, held: 0n });
    expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
    await services.deposits.apply(started.id, { providerRef: started.providerRef ?? '', status: 'succeeded' });
    await services.deposits.apply(started.id, { providerRef: started.providerRef ?? '', status: 'succeeded' });
    expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({ available: 50_100n, held: 0n });
  });
});
