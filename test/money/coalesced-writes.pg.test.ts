import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { DomainError } from '../../src/domain/errors.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

const principalOf = (userId: string): Principal => ({
  kind: 'api_key',
  credentialId: 'test',
  userId,
  environment: 'sandbox',
  abilities: new Set(['READ', 'TRANSACT']),
});

const WRITES = new Set(['bill_open_v1', 'bill_settle_v2', 'deposit_open_v1', 'deposit_started_v1']);

/**
 * The one-statement writes of bills and deposits: how many ran on their own, how many inside a
 * transaction, and how many such transactions (batches) committed.
 */
function countWrites() {
  const counted = { alone: 0, batched: 0, batches: 0 };
  const open = new WeakMap<object, { wrote: boolean }>();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: object, ...args: unknown[]) {
    const first = args[0] as { name?: string; text?: string } | string;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    const name = typeof first === 'string' ? undefined : first?.name;
    if (/^\s*begin\b/i.test(text)) open.set(this, { wrote: false });
    else if (/^\s*(commit|rollback)\b/i.test(text)) {
      if (/^\s*commit/i.test(text) && open.get(this)?.wrote) counted.batches++;
      open.delete(this);
    } else if (name && WRITES.has(name)) {
      const batch = open.get(this);
      if (batch) {
        batch.wrote = true;
        counted.batched++;
      } else counted.alone++;
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as never;
  return { counted, stop: () => (pg.Client.prototype.query = original) };
}

const airtime = { type: 'AIRTIME' as const, biller: 'MTN', customer: '08031234567', amount: 100 };

/**
 * Bills and deposits of many tenants at once, on two gateway instances (each its own pool and its
 * own batches) on one database: their writes share commits, and every request still gets its own
 * exact answer, key, money and events.
 */
describe.skipIf(!onPostgres)('bills and deposits of many tenants coalesced into shared commits (PostgreSQL)', () => {
  const handles: DatabaseHandle[] = [];
  let a: Services;
  let b: Services;
  beforeAll(async () => {
    const url = await isolatedTestDatabaseUrl();
    handles.push(await openDatabase({ databaseUrl: url, poolSize: 10 }));
    handles.push(await openDatabase({ databaseUrl: url, poolSize: 10 }));
    a = await createTestServices(handles[0]!.db);
    b = await createTestServices(handles[1]!.db);
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
  });

  it('commits concurrent airtime and deposits in batches, each with its own answer, key, refusal, money and events', async () => {
    const tenants = [];
    for (let i = 0; i < 12; i++) tenants.push(await seedTenant(a));
    // Each tenant holds ₦1,050: ten ₦100 airtime payments fit, the eleventh and twelfth are refused.
    for (const tenant of tenants)
      await a.db.transaction((tx) =>
        ledger.post(tx, {
          environment: 'sandbox',
          kind: 'test-funding',
          reference: crypto.randomUUID(),
          lines: [
            { account: systemAccount('sandbox', 'provider_clearing'), amount: -105_000n },
            { account: walletOf('sandbox', tenant.user.id), amount: 105_000n },
          ],
        }),
      );
    type Call = {
      kind: 'bill' | 'bill-other' | 'deposit' | 'deposit-twin';
      tenant: number;
      key?: string;
      run: () => Promise<{ id: string }>;
    };
    const calls: Call[] = [];
    const service = (i: number) => (i % 2 === 0 ? a : b);
    for (const [n, tenant] of tenants.entries()) {
      const principal = principalOf(tenant.user.id);
      for (let i = 0; i < 12; i++) {
        const key = i % 5 === 0 ? undefined : `bill-${n}-${i}`;
        calls.push({
          kind: 'bill',
          tenant: n,
          ...(key ? { key } : {}),
          run: () => service(i).bills.pay(principal, airtime, key),
        });
      }
      for (let i = 0; i < 6; i++)
        calls.push({
          kind: 'deposit',
          tenant: n,
          run: () => service(i).deposits.bankTransfer(principal, { amount: 50 }, `dep-${n}-${i}`),
        });
    }
    // Pairs sharing a key: the same body twice (on the same instance or the other), or another body.
    const pairs: Call[] = [];
    for (const [n, tenant] of tenants.entries()) {
      const principal = principalOf(tenant.user.id);
      pairs.push(
        {
          kind: 'deposit-twin',
          tenant: n,
          run: () => a.deposits.bankTransfer(principal, { amount: 20 }, `dtwin-${n}`),
        },
        {
          kind: 'deposit-twin',
          tenant: n,
          run: () => service(n).deposits.bankTransfer(principal, { amount: 20 }, `dtwin-${n}`),
        },
        { kind: 'bill-other', tenant: n, run: () => a.bills.pay(principal, { ...airtime, amount: 50 }, `bother-${n}`) },
        { kind: 'bill-other', tenant: n, run: () => b.bills.pay(principal, { ...airtime, amount: 60 }, `bother-${n}`) },
      );
    }
    const all = [...calls, ...pairs];
    const watch = countWrites();
    const results = await Promise.allSettled(all.map((c) => c.run()));
    watch.stop();

    const codeOf = (r: PromiseSettledResult<unknown>) =>
      r.status === 'fulfilled' ? 'ok' : r.reason instanceof DomainError ? r.reason.code : String(r.reason);
    results.forEach((r, i) => {
      const code = codeOf(r);
      const kind = all[i]!.kind;
      if (kind === 'deposit') expect(code, `call ${i}`).toBe('ok');
      else if (kind === 'bill') expect(['ok', 'INSUFFICIENT_FUNDS'], `call ${i}: ${code}`).toContain(code);
      else
        expect(['ok', 'INSUFFICIENT_FUNDS', 'CONFLICT', 'IDEMPOTENCY_KEY_REUSED'], `call ${i}: ${code}`).toContain(
          code,
        );
    });
    const offset = calls.length;
    const pairBills = new Map<number, { id: string }>();
    for (const [n] of tenants.entries()) {
      const [d1, d2, o1, o2] = results.slice(offset + 4 * n, offset + 4 * n + 4);
      // A twin's second answer is the first's deposit (or 409 while it ran).
      const twin = [d1!, d2!].map(codeOf);
      expect(twin).toContain('ok');
      if (twin[0] === 'ok' && twin[1] === 'ok')
        expect((d1 as PromiseFulfilledResult<{ id: string }>).value.id).toBe(
          (d2 as PromiseFulfilledResult<{ id: string }>).value.id,
        );
      else expect(twin).toContain('CONFLICT');
      // Another body under one key: at most one bill, the other refused (422, or 409 while the first ran).
      const other = [o1!, o2!].map(codeOf);
      expect(other.filter((c) => c === 'ok').length).toBeLessThanOrEqual(1);
      const okOther = [o1!, o2!].find((r) => r.status === 'fulfilled') as
        | PromiseFulfilledResult<{ id: string }>
        | undefined;
      if (okOther) {
        expect(other.some((c) => c === 'IDEMPOTENCY_KEY_REUSED' || c === 'CONFLICT')).toBe(true);
        pairBills.set(n, okOther.value);
      }
    }

    for (const [n, tenant] of tenants.entries()) {
      const bills = results
        .map((r, i) => ({ r, c: all[i]! }))
        .filter(({ r, c }) => c.tenant === n && c.kind === 'bill' && r.status === 'fulfilled')
        .map(({ r }) => (r as PromiseFulfilledResult<{ id: string }>).value.id);
      const twinBill = pairBills.get(n);
      const billIds = twinBill ? [...bills, twinBill.id] : bills;
      const rows = await queryRows<{ id: string; amount: string; fee: string; status: string; reference: string }>(
        a.db,
        sql`select id, amount::text, fee::text, status::text, reference from bill_records where user_id = ${tenant.user.id}`,
      );
      // Exactly the answered bills exist, each SUCCESS, and exactly their money left the wallet.
      expect(new Set(rows.map((r) => r.id))).toEqual(new Set(billIds));
      expect(rows.every((r) => r.status === 'SUCCESS')).toBe(true);
      const spent = rows.reduce((sum, r) => sum + BigInt(r.amount) + BigInt(r.fee), 0n);
      // Refused only for want of money: what is left cannot pay another ₦100 bill.
      expect(rows.length).toBeGreaterThan(0);
      expect(105_000n - spent).toBeLessThan(
        BigInt(rows.find((r) => r.amount === '10000')?.amount ?? 10_000) + BigInt(rows[0]!.fee),
      );
      expect(await ledger.balances(a.db, 'sandbox', tenant.user.id)).toEqual({ available: 105_000n - spent, held: 0n });
      // One event set per bill: its transaction created and completed once, its success once.
      const events = await queryRows<{ type: string; id: string; n: number }>(
        a.db,
        sql`select type, coalesce(data->>'reference', data->>'id') as id, count(*)::int as n from events
            where user_id = ${tenant.user.id} and type in ('transaction.created', 'transaction.completed', 'bill.payment.successful')
              and (type = 'bill.payment.successful' or data->>'type' = 'BILL')
            group by 1, 2`,
      );
      for (const type of ['transaction.created', 'transaction.completed', 'bill.payment.successful']) {
        const ofType = events.filter((e) => e.type === type);
        expect(ofType.length, type).toBe(rows.length);
        expect(
          ofType.every((e) => e.n === 1),
          type,
        ).toBe(true);
      }
      // Deposits: six unique and one twin, each pending once with its events once.
      const deposits = await queryRows<{ id: string; status: string }>(
        a.db,
        sql`select id, status::text from deposits where user_id = ${tenant.user.id}`,
      );
      expect(deposits.length).toBe(7);
      expect(deposits.every((d) => d.status === 'pending')).toBe(true);
      const depositEvents = await queryRows<{ type: string; n: number }>(
        a.db,
        sql`select type, count(*)::int as n from events
            where user_id = ${tenant.user.id} and type in ('deposit.initiated', 'deposit.pending') group by 1`,
      );
      expect(Object.fromEntries(depositEvents.map((e) => [e.type, e.n]))).toEqual({
        'deposit.initiated': 7,
        'deposit.pending': 7,
      });
      // Every keyed bill answered got its key answered with it: a done row whose response is that bill.
      const keys = await queryRows<{ key: string; status: string; id: string | null }>(
        a.db,
        sql`select key, status::text, response->'result'->>'id' as id from idempotency_keys
            where user_id = ${tenant.user.id} and operation = 'bills.pay'`,
      );
      for (const [i, c] of all.entries()) {
        if (c.tenant !== n || c.kind !== 'bill' || !c.key || results[i]!.status !== 'fulfilled') continue;
        const key = keys.find((k) => k.key === c.key);
        expect(key?.status).toBe('done');
        expect(key?.id).toBe((results[i] as PromiseFulfilledResult<{ id: string }>).value.id);
      }
    }
    expect(await ledger.totalOf(a.db, 'sandbox')).toBe(0n);
    // Coalesced: many writes ran inside shared transactions (without coalescing every one runs alone).
    expect(watch.counted.batches).toBeGreaterThan(0);
    expect(watch.counted.batched).toBeGreaterThan(watch.counted.batches);
    expect(watch.counted.alone + watch.counted.batches).toBeLessThan(
      (watch.counted.alone + watch.counted.batched) * 0.75,
    );
  }, 180_000);
});
