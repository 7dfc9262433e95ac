import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { heldAccounts } from '../../src/domain/money/settle-held.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { type PayoutRow, payoutStore } from '../../src/domain/wallet/payout-store.js';
import { settlePayout } from '../../src/domain/wallet/payout-writes.js';
import { seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

/**
 * A held operation settles by one statement (money/settle-held.ts) or, when that cannot write the
 * move, by a transaction of steps (the service's settle: ledger capture or release, the state
 * table's transition, the wallet transaction's move). Both are built from the same rules
 * (ledger/hold-settlement.ts for the money); this checks they write the same rows: the operation,
 * the hold, the posting and its entries, the wallet transaction, the moves kept and the events.
 */
describe('a held settle written as one statement and as steps', () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

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

  /** Every row the settle wrote, with the ids that differ between two payouts named, not compared. */
  async function footprint(payout: PayoutRow, since: Date) {
    const db = s.t.services.db;
    const [hold] = await queryRows<{ transaction_id: string }>(
      db,
      sql`select transaction_id from ledger_holds where id = ${payout.holdId}`,
    );
    const rows = {
      payout: await queryRows(
        db,
        sql`select status, provider_ref, failure_reason, version, updated_at from payouts where id = ${payout.id}`,
      ),
      hold: await queryRows(db, sql`select status, amount, settled_at from ledger_holds where id = ${payout.holdId}`),
      // A system account's shard is chosen at random, and its balance is every tenant's: compared by
      // code and amount; a user's accounts by their balance after, too.
      entries: await queryRows(
        db,
        sql`select p.kind, p.description, a.code, e.amount,
              case when a.user_id is null then null else e.balance_after end as balance_after
            from ledger_postings p
            join ledger_entries e on e.posting_id = p.id
            join ledger_accounts a on a.id = e.account_id
            where p.reference = ${payout.holdId} and p.kind in ('capture', 'release')
            order by p.kind, a.code, e.amount`,
      ),
      transaction: await queryRows(
        db,
        sql`select status, version, updated_at from wallet_transactions where id = ${hold!.transaction_id}`,
      ),
      moves: await queryRows(
        db,
        sql`select kind, from_status, to_status, at from operation_transitions
            where operation_id in (${payout.id}, ${hold!.transaction_id}) and at >= ${since.toISOString()}
            order by kind, from_status`,
      ),
      events: await queryRows(
        db,
        sql`select type, data from events
            where user_id = ${payout.userId} and created_at >= ${since.toISOString()} order by type`,
      ),
    };
    let text = JSON.stringify(rows);
    for (const [id, name] of [
      [payout.id, '<payout>'],
      [payout.holdId, '<hold>'],
      [hold!.transaction_id, '<transaction>'],
      [payout.reference, '<reference>'],
      [payout.userId, '<user>'],
    ] as const)
      text = text.replaceAll(id, name);
    return JSON.parse(text);
  }

  for (const to of ['completed', 'failed'] as const)
    it(`${to === 'completed' ? 'a capture' : 'a release'}: the same rows either way`, async () => {
      const steps = await processingPayout();
      const statement = await processingPayout();
      clock.advance(60_000);
      const since = clock.now();
      const state = {
        status: to === 'completed' ? ('succeeded' as const) : ('failed' as const),
        providerRef: 'PRV-1',
        reason: to === 'failed' ? 'Account closed' : undefined,
      };

      const bySteps = await s.t.services.payouts.settle(steps.payout.id, state);
      const db = s.t.services.db;
      const current = (await payoutStore.findById(db, statement.payout.id))!;
      const byStatement = await settlePayout(db, {
        payout: current,
        to,
        changes: { providerRef: 'PRV-1', failureReason: state.reason ?? null },
        at: clock.now(),
        accounts: await heldAccounts(db, 'sandbox', current.userId),
        key: null,
      });

      expect(bySteps.status).toBe(to);
      expect(byStatement?.status).toBe(to);
      const written = await footprint(steps.payout, since);
      expect(written.entries.length).toBeGreaterThanOrEqual(2);
      expect(written.events.map((e: { type: string }) => e.type)).toEqual([`payout.${to}`, `transaction.${to}`]);
      expect(await footprint(statement.payout, since)).toEqual(written);
    });
});
