import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { BILL } from '../../src/domain/bills/bill-lifecycle.js';
import type { BillRecordRow } from '../../src/domain/bills/bill-record.js';
import type { BillOutcome } from '../../src/domain/bills/bills-provider.js';
import { SANDBOX_BILLS } from '../../src/domain/bills/sandbox-bills-provider.js';
import { ManualClock } from '../../src/domain/clock.js';
import type { HeldOperation } from '../../src/domain/money/held-operation.js';
import type { TransferState } from '../../src/domain/payments/payments-provider.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { PAYOUT } from '../../src/domain/wallet/payout-lifecycle.js';
import { type PayoutRow, payoutStore } from '../../src/domain/wallet/payout-store.js';
import { seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';
import { payoutOpening } from '../helpers/payout-opening.js';

/**
 * A held operation (money/held-operation.ts) settles by one statement generated from its kind's
 * description (money/settle-held.ts) or, when that cannot write the move, by a transaction of
 * steps (ledger capture or release, the state table's transition, the wallet transaction's move).
 * For EVERY move of the bill and payout state tables this checks the two write the same rows: the
 * operation, the hold, the posting and its entries, the wallet transaction, the moves kept and the
 * events. A move the statement cannot write (a payout's initiated → processing keeps its hold) has
 * one path only: the statement declines it and writes nothing.
 */
describe('a held settle written as one statement and as steps', () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  type Held = PayoutRow | BillRecordRow;

  /** A payout the provider has not answered (the sandbox's time-out account): processing, its money held. */
  async function processingPayout(): Promise<{ tenant: Tenant; payout: PayoutRow }> {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 2000);
    const reference = `PO-${crypto.randomUUID().slice(0, 8)}`;
    const response = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/withdraw', {
      amount: 1000,
      bankCode: '044',
      accountNumber: SANDBOX_PAYMENTS.payouts.timeoutAccount,
      reference,
    });
    expect(response.json().data.status).toBe('processing');
    const owner = { userId: tenant.user.id, environment: 'sandbox' as const };
    return { tenant, payout: (await payoutStore.findByReference(s.t.services.db, owner, reference))! };
  }

  /** A payout after its first commit only (the provider not yet called): initiated, its money held. */
  async function initiatedPayout(): Promise<PayoutRow> {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 2000);
    const principal: Principal = {
      kind: 'session',
      credentialId: 'held-settle-paths',
      userId: tenant.user.id,
      environment: 'sandbox',
      abilities: new Set(['READ', 'TRANSACT']),
    };
    const reference = `PO-${crypto.randomUUID().slice(0, 8)}`;
    const opened = (await s.t.services.payouts.held.open(
      payoutOpening(s.t.services, principal, { reference, narration: null, key: undefined, now: clock.now() }),
    )) as { opened: PayoutRow };
    expect(opened.opened.status).toBe('initiated');
    return opened.opened;
  }

  /** A bill the provider has not answered (the sandbox's delayed customer): PENDING, its money held. */
  async function pendingBill(): Promise<BillRecordRow> {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 2000);
    const reference = `BL-${crypto.randomUUID().slice(0, 8)}`;
    const response = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/bills/pay/airtime', {
      phoneNumber: SANDBOX_BILLS.delayedCustomer,
      biller: 'GLO',
      amount: 300,
      reference,
    });
    expect(response.json().data.status).toBe('PENDING');
    const owner = { userId: tenant.user.id, environment: 'sandbox' as const };
    return (await s.t.services.bills.record(principalFor(owner), reference))!;
  }

  const principalFor = (owner: { userId: string; environment: 'sandbox' }): Principal => ({
    kind: 'session',
    credentialId: 'held-settle-paths',
    ...owner,
    abilities: new Set(['READ', 'TRANSACT']),
  });

  /** Every row the settle wrote, with the ids that differ between two operations named, not compared. */
  async function footprint(table: 'payouts' | 'bill_records', op: Held, since: Date) {
    const db = s.t.services.db;
    const [hold] = await queryRows<{ transaction_id: string }>(
      db,
      sql`select transaction_id from ledger_holds where id = ${op.holdId}`,
    );
    const rows = {
      operation: await queryRows(
        db,
        table === 'payouts'
          ? sql`select status, provider_ref, failure_reason, version, updated_at from payouts where id = ${op.id}`
          : sql`select status, tx_ref, provider_data, token, units, failure_reason, version, updated_at
                from bill_records where id = ${op.id}`,
      ),
      hold: await queryRows(
        db,
        sql`select status, amount, settled_at, expires_at from ledger_holds where id = ${op.holdId}`,
      ),
      // A system account's shard is chosen at random, and its balance is every tenant's: compared by
      // code and amount; a user's accounts by their balance after, too.
      entries: await queryRows(
        db,
        sql`select p.kind, p.description, a.code, e.amount,
              case when a.user_id is null then null else e.balance_after end as balance_after
            from ledger_postings p
            join ledger_entries e on e.posting_id = p.id
            join ledger_accounts a on a.id = e.account_id
            where p.reference = ${op.holdId} and p.kind in ('capture', 'release')
            order by p.kind, a.code, e.amount`,
      ),
      transaction: await queryRows(
        db,
        sql`select status, version, updated_at from wallet_transactions where id = ${hold!.transaction_id}`,
      ),
      moves: await queryRows(
        db,
        sql`select kind, from_status, to_status, at from operation_transitions
            where operation_id in (${op.id}, ${hold!.transaction_id}) and at >= ${since.toISOString()}
            order by kind, from_status`,
      ),
      events: await queryRows(
        db,
        sql`select type, data from events
            where user_id = ${op.userId} and created_at >= ${since.toISOString()} order by type`,
      ),
    };
    let text = JSON.stringify(rows);
    for (const [id, name] of [
      [op.id, '<operation>'],
      [op.holdId!, '<hold>'],
      [hold!.transaction_id, '<transaction>'],
      [op.reference, '<reference>'],
      [op.userId, '<user>'],
    ] as const)
      text = text.replaceAll(id, name);
    return JSON.parse(text);
  }

  const transferState = (to: string): TransferState =>
    to === 'completed'
      ? { status: 'succeeded', providerRef: 'PRV-1' }
      : to === 'failed'
        ? { status: 'failed', providerRef: 'PRV-1', reason: 'Account closed' }
        : { status: 'pending', providerRef: 'PRV-1' };
  const billOutcome = (to: string): BillOutcome =>
    to === 'SUCCESS'
      ? { status: 'SUCCESS', txRef: 'TX-1', token: '1234-5678', units: '12.5', providerData: { paid: true } }
      : { status: 'FAILED', txRef: null, reason: 'Declined by the biller', providerData: { paid: false } };

  /** Each table's moves, read from the table itself: a move added there is checked here. */
  const cases = [
    ...Object.entries(PAYOUT.moves).flatMap(([from, tos]) =>
      Object.keys(tos).map((to) => ({ table: 'payouts' as const, from, to })),
    ),
    ...Object.entries(BILL.moves).flatMap(([from, tos]) =>
      Object.keys(tos).map((to) => ({ table: 'bill_records' as const, from, to })),
    ),
  ];

  it('covers every move of both tables', () => {
    expect(cases.map((c) => `${c.table}: ${c.from} → ${c.to}`)).toEqual([
      'payouts: initiated → processing',
      'payouts: initiated → completed',
      'payouts: initiated → failed',
      'payouts: processing → completed',
      'payouts: processing → failed',
      'bill_records: PENDING → SUCCESS',
      'bill_records: PENDING → FAILED',
    ]);
  });

  for (const { table, from, to } of cases)
    it(`${table}: ${from} → ${to}, the same rows either way`, async () => {
      const make = async (): Promise<Held> =>
        table === 'bill_records'
          ? pendingBill()
          : from === 'initiated'
            ? initiatedPayout()
            : (await processingPayout()).payout;
      const held = (table === 'payouts'
        ? s.t.services.payouts.held
        : s.t.services.bills.held) as unknown as HeldOperation<Held, unknown>;
      const outcome = table === 'payouts' ? transferState(to) : billOutcome(to);
      const steps = await make();
      const statement = await make();
      expect([steps.status, statement.status]).toEqual([from, from]);
      clock.advance(60_000);
      const since = clock.now();

      const bySteps = await held.settleBySteps(steps.id, outcome);
      const current = await held.byId(statement.id);
      const byStatement = await held.settleInOneStatement(current, outcome);

      expect(bySteps.status).toBe(to);
      const written = await footprint(table, steps, since);
      expect(written.moves.length).toBeGreaterThanOrEqual(1);
      // A held operation's hold never expires: only the provider's outcome gives the money back.
      expect(written.hold).toEqual([expect.objectContaining({ expires_at: null })]);
      if ('keep' in held.kind.change(current, outcome)) {
        // The hold is kept: one path only. The statement declines the move and writes nothing;
        // the steps move the operation and tell its wallet transaction, nothing more.
        expect(byStatement).toBeUndefined();
        expect((await footprint(table, statement, since)).moves).toEqual([]);
        expect(written.entries).toEqual([]);
        expect(written.events.map((e: { type: string }) => e.type)).toEqual([`payout.${to}`, 'transaction.updated']);
        return;
      }
      expect(byStatement?.status).toBe(to);
      expect(written.entries.length).toBeGreaterThanOrEqual(2);
      const captured = to === 'completed' || to === 'SUCCESS';
      const opEvent =
        table === 'payouts' ? `payout.${to}` : captured ? 'bill.payment.successful' : 'bill.payment.failed';
      expect(written.events.map((e: { type: string }) => e.type)).toEqual([
        opEvent,
        captured ? 'transaction.completed' : 'transaction.failed',
      ]);
      expect(await footprint(table, statement, since)).toEqual(written);
    });
});
