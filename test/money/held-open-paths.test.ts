import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import type { ResolvedPayment } from '../../src/domain/bills/bill-catalogue.js';
import type { BillRecordRow } from '../../src/domain/bills/bill-record.js';
import { ManualClock } from '../../src/domain/clock.js';
import type { KeyedOpen } from '../../src/domain/money/held-operation.js';
import { openKeyedOperation } from '../../src/domain/money/keyed-open.js';
import type { PaymentsProvider } from '../../src/domain/payments/payments-provider.js';
import type { NewDeposit } from '../../src/domain/wallet/deposit-rows.js';
import { type DepositRow, depositStore } from '../../src/domain/wallet/deposit-store.js';
import type { PayoutRow } from '../../src/domain/wallet/payout-store.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';
import { payoutOpening } from '../helpers/payout-opening.js';

/**
 * A bill's first commit has two forms: ONE statement (bill-writes.ts, the request path, generated
 * by money/held-open.ts from the bill's shape, as a payout's is) and the
 * held operation's steps (a beneficiary saved with it, or a key taken over). Both go through the
 * held operation's `open` (money/keyed-open.ts); this checks they write the same rows: the record,
 * the hold with its posting and entries, the pending wallet transaction, its event, the status
 * poll job and the key left running with the record.
 */
describe('a held open written as one statement and as steps', () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({
      clock,
      isolated: true,
      // Production's payout limits on sandbox keys too: both paths count the payout against its credential.
      config: { RATE_LIMIT_PER_MINUTE: 100_000, PAYOUT_LIMITS_SANDBOX: true },
    });
  });
  afterAll(() => s.t.close());

  async function tenantPrincipal(): Promise<Principal> {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 2000);
    return {
      kind: 'session',
      credentialId: 'held-open-paths',
      userId: tenant.user.id,
      environment: 'sandbox',
      abilities: new Set(['READ', 'TRANSACT']),
    };
  }

  /**
   * Every row a held open wrote, ids that differ between two opens named, not compared: what every
   * held open writes (the hold, its posting and entries, the wallet transaction, the events, the key
   * left running), and the operation's `own` rows.
   */
  async function footprint(
    opened: { id: string; holdId: string | null; userId: string; reference: string },
    own: Record<string, SQL>,
  ) {
    const db = s.t.services.db;
    const [hold] = await queryRows<{ transaction_id: string }>(
      db,
      sql`select transaction_id from ledger_holds where id = ${opened.holdId}`,
    );
    const rows: Record<string, unknown> = {
      hold: await queryRows(
        db,
        // created_at is the database's default on both paths (not the account's clock): not compared.
        sql`select environment, status, amount, reference, expires_at, settled_at
            from ledger_holds where id = ${opened.holdId}`,
      ),
      entries: await queryRows(
        db,
        sql`select p.kind, p.description, a.code, e.amount, e.balance_after
            from ledger_postings p
            join ledger_entries e on e.posting_id = p.id
            join ledger_accounts a on a.id = e.account_id
            where p.reference = ${opened.holdId} and p.kind = 'hold' and a.user_id = ${opened.userId}
            order by a.code`,
      ),
      transaction: await queryRows(
        db,
        sql`select type, status, amount, fee, currency, reference, description, counterparty, version,
              created_at, updated_at
            from wallet_transactions where id = ${hold!.transaction_id}`,
      ),
      events: await queryRows(
        db,
        sql`select type, data from events
            where user_id = ${opened.userId} and data->>'reference' = ${opened.reference} order by type`,
      ),
      key: await queryRows(
        db,
        sql`select operation, status, resource_id, locked_until from idempotency_keys
            where user_id = ${opened.userId} and key = 'open-paths'`,
      ),
    };
    for (const [name, query] of Object.entries(own)) rows[name] = await queryRows(db, query);
    let text = JSON.stringify(rows);
    for (const [id, name] of [
      [opened.id, '<record>'],
      [opened.holdId!, '<hold>'],
      [hold!.transaction_id, '<transaction>'],
      [opened.userId, '<user>'],
    ] as const)
      text = text.replaceAll(id, name);
    return JSON.parse(text);
  }

  /** A bill's own rows: the record and its status-poll job. */
  const billFootprint = (record: BillRecordRow) =>
    footprint(record, {
      record: sql`select environment, reference, biller_code, item_code, customer, amount, fee, type, biller_name,
              customer_name, validity_period, metadata, provider, schedule_id, status, tx_ref, provider_data,
              token, units, failure_reason, version, created_at, updated_at
            from bill_records where id = ${record.id}`,
      jobs: sql`select kind, lane, tenant, payload->>'recordId' as record, run_at from jobs
            where payload->>'recordId' = ${record.id}`,
    });

  /** A payout's own rows: the payout, its reconcile job and the row counting it against its credential's limits. */
  const payoutFootprint = (payout: PayoutRow) =>
    footprint(payout, {
      payout: sql`select environment, reference, amount, fee, bank_code, bank_name, account_number, account_name,
              narration, status, provider, provider_ref, failure_reason, version, created_at, updated_at
            from payouts where id = ${payout.id}`,
      jobs: sql`select kind, lane, tenant, payload->>'payoutId' as payout, run_at from jobs
            where payload->>'payoutId' = ${payout.id}`,
      usage: sql`select credential_id, environment, reference, amount, created_at from payout_key_usage
            where user_id = ${payout.userId}`,
    });

  it('writes the same rows either way', async () => {
    const bills = s.t.services.bills;
    // The service's own description of the open (its private `opening`), as `pay` gives it.
    const service = bills as unknown as {
      opening: (
        principal: Principal,
        payment: ResolvedPayment,
        reference: string,
        now: Date,
        keyed: unknown,
        beneficiary: undefined,
      ) => KeyedOpen<BillRecordRow>;
    };
    const opened: BillRecordRow[] = [];
    for (const way of ['steps', 'statement'] as const) {
      const principal = await tenantPrincipal();
      const input = { type: 'AIRTIME' as const, customer: '08031234567', biller: 'MTN', amount: 500 };
      const payment = await bills.catalogue.resolvePayment(principal, input as never);
      const reference = 'OPEN-PATHS-1';
      const keyed = {
        scope: { userId: principal.userId, environment: principal.environment, operation: 'bills.pay' },
        key: 'open-paths',
        input: { payment, reference },
      };
      const open = service.opening(principal, payment, reference, clock.now(), keyed, undefined);
      expect(open.statement).toBeDefined();
      const result = await bills.held.open(way === 'steps' ? { ...open, statement: undefined } : open);
      expect('opened' in result).toBe(true);
      opened.push((result as { opened: BillRecordRow }).opened);
    }
    const [bySteps, byStatement] = opened;
    const written = await billFootprint(bySteps!);
    expect(written.record).toHaveLength(1);
    expect(written.entries).toHaveLength(2);
    expect(written.jobs).toHaveLength(1);
    expect(written.key).toEqual([expect.objectContaining({ status: 'running', resource_id: '<record>' })]);
    expect(written.events.map((e: { type: string }) => e.type)).toEqual(['transaction.created']);
    expect(await billFootprint(byStatement!)).toEqual(written);
  });

  it('a payout writes the same rows either way, the row counting it against its limits included', async () => {
    const opened: PayoutRow[] = [];
    for (const way of ['steps', 'statement'] as const) {
      const principal = await tenantPrincipal();
      const reference = 'OPEN-PATHS-PO';
      const open = payoutOpening(s.t.services, principal, {
        reference,
        narration: 'rent',
        key: 'open-paths',
        now: clock.now(),
      });
      expect(open.statement).toBeDefined();
      const result = await s.t.services.payouts.held.open(way === 'steps' ? { ...open, statement: undefined } : open);
      expect('opened' in result).toBe(true);
      opened.push((result as { opened: PayoutRow }).opened);
    }
    const [bySteps, byStatement] = opened;
    expect(byStatement).toEqual({
      ...bySteps,
      id: byStatement!.id,
      holdId: byStatement!.holdId,
      userId: byStatement!.userId,
    });
    const written = await payoutFootprint(bySteps!);
    expect(written.payout).toHaveLength(1);
    expect(written.entries).toHaveLength(2);
    expect(written.jobs).toHaveLength(1);
    expect(written.usage).toHaveLength(1);
    expect(written.key).toEqual([expect.objectContaining({ status: 'running', resource_id: '<record>' })]);
    expect(written.events.map((e: { type: string }) => e.type)).toEqual(['payout.initiated', 'transaction.created']);
    expect(await payoutFootprint(byStatement!)).toEqual(written);
  });
  it('a deposit, which holds nothing, writes the same rows either way', async () => {
    const deposits = s.t.services.deposits as unknown as {
      providerFor: (environment: 'sandbox') => PaymentsProvider;
      opening: (
        principal: Principal,
        provider: PaymentsProvider,
        row: NewDeposit,
        keyed: unknown,
        now: Date,
      ) => KeyedOpen<DepositRow>;
    };
    const opened: DepositRow[] = [];
    for (const way of ['steps', 'statement'] as const) {
      const principal = await tenantPrincipal();
      const provider = deposits.providerFor('sandbox');
      const reference = 'OPEN-PATHS-DEP';
      const row: NewDeposit = {
        id: randomUUID(),
        userId: principal.userId,
        environment: 'sandbox',
        reference,
        method: 'bank_transfer',
        paymentMethodId: null,
        amount: 150_000n,
        currency: 'NGN',
        provider: provider.name,
        redirectUrl: null,
        narration: 'top up',
        meta: { source: 'open-paths' },
        customer: null,
      };
      const keyed = {
        scope: { userId: principal.userId, environment: principal.environment, operation: 'wallet.deposit' },
        key: 'open-paths',
        input: { reference },
      };
      const open = deposits.opening(principal, provider, row, keyed, clock.now());
      expect(open.statement).toBeDefined();
      const result = await openKeyedOperation(
        s.t.services.db,
        s.t.services.idempotency,
        clock.now(),
        way === 'steps' ? { ...open, statement: undefined } : open,
        async (tx, id) => (await depositStore.findById(tx, id))!,
      );
      expect('opened' in result).toBe(true);
      opened.push((result as { opened: DepositRow }).opened);
    }
    const written = async (deposit: DepositRow) => {
      const db = s.t.services.db;
      const rows = {
        deposit: await queryRows(
          db,
          sql`select environment, reference, method, payment_method_id, amount, currency, status, provider,
                provider_ref, next_action, account_number, bank_name, account_name, expires_at, redirect_url,
                narration, meta, customer, failure_reason, version, created_at, updated_at
              from deposits where id = ${deposit.id}`,
        ),
        transaction: await queryRows(
          db,
          sql`select type, status, amount, fee, currency, reference, description, counterparty, version,
                created_at, updated_at
              from wallet_transactions where id = ${deposit.transactionId}`,
        ),
        events: await queryRows(
          db,
          sql`select type, data from events where user_id = ${deposit.userId} and data->>'reference' = ${deposit.reference}
              order by type`,
        ),
        jobs: await queryRows(
          db,
          sql`select kind, lane, tenant, payload->>'depositId' as deposit, run_at from jobs
              where payload->>'depositId' = ${deposit.id}`,
        ),
        key: await queryRows(
          db,
          sql`select operation, status, resource_id, locked_until from idempotency_keys
              where user_id = ${deposit.userId} and key = 'open-paths'`,
        ),
        holds: await queryRows(db, sql`select id from ledger_holds where user_id = ${deposit.userId}`),
      };
      let text = JSON.stringify(rows);
      for (const [id, name] of [
        [deposit.id, '<deposit>'],
        [deposit.transactionId!, '<transaction>'],
        [deposit.userId, '<user>'],
      ] as const)
        text = text.replaceAll(id, name);
      return JSON.parse(text);
    };
    const [bySteps, byStatement] = opened;
    const steps = await written(bySteps!);
    expect(steps.deposit).toHaveLength(1);
    expect(steps.transaction).toHaveLength(1);
    expect(steps.jobs).toHaveLength(1);
    expect(steps.holds).toEqual([]);
    expect(steps.key).toEqual([expect.objectContaining({ status: 'running', resource_id: '<deposit>' })]);
    expect(steps.events.map((e: { type: string }) => e.type)).toEqual(['deposit.initiated', 'transaction.created']);
    expect(await written(byStatement!)).toEqual(steps);
  });
});
