import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { DomainError } from '../../src/domain/errors.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { LOCK_ACCOUNTS } from '../../src/domain/wallet/transfer-store.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { principalOf } from '../helpers/principal.js';

type Query = (...args: unknown[]) => unknown;

/** Counts batches (transactions that begin with the batch's lock statement) on either driver. */
function countBatches(t: TestApp) {
  const counted = { batches: 0 };
  const isLock = (first: unknown) =>
    (typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text) === LOCK_ACCOUNTS.text;
  const client = (t.services.db as unknown as { $client: Record<string, Query> }).$client;
  if (client instanceof pg.Pool) {
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
      if (isLock(args[0])) counted.batches++;
      return (original as Query).apply(this, args);
    } as never;
    return { counted, stop: () => (pg.Client.prototype.query = original) };
  }
  const transaction = client['transaction']!;
  client['transaction'] = function (this: unknown, ...args: unknown[]) {
    const callback = args[0] as (tx: Record<string, Query>) => Promise<unknown>;
    return transaction.call(this, (tx: Record<string, Query>) => {
      const query = tx['query']!;
      tx['query'] = (...inner: unknown[]) => {
        if (isLock(inner[0])) counted.batches++;
        return query.apply(tx, inner);
      };
      return callback(tx);
    });
  };
  return { counted, stop: () => (client['transaction'] = transaction) };
}

describe('a hot wallet: concurrent transfers from one sender', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('commit together in batches, each keeping its own answer, key, balance check and events', async () => {
    const payer = await seedTenant(t.services);
    const payee = await seedTenant(t.services);
    await t.services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test-funding',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -30_000n },
          { account: walletOf('sandbox', payer.user.id), amount: 30_000n },
        ],
      }),
    );
    const principal = principalOf(payer.user.id);
    const send = (key: string | undefined, narration = 'hot', reference?: string) =>
      t.services.wallet.transfer(
        principal,
        { amount: 5, recipient: payee.user.id, narration, ...(reference ? { reference } : {}) },
        key,
      );
    // 125 distinct transfers of 500 kobo against 30,000: exactly 60 move money.
    const calls: Array<() => Promise<{ id: string }>> = [];
    for (let i = 0; i < 100; i++) calls.push(() => send(i % 5 === 0 ? undefined : `hot-${i}-${payer.user.id}`));
    for (let i = 0; i < 10; i++) {
      calls.push(
        () => send(`twin-${i}-${payer.user.id}`),
        () => send(`twin-${i}-${payer.user.id}`),
      );
      calls.push(
        () => send(`other-${i}-${payer.user.id}`, 'first'),
        () => send(`other-${i}-${payer.user.id}`, 'second'),
      );
    }
    // One reference sent five times: a batch that meets the taken reference is rolled back and its
    // transfers run again one by one, so only the duplicates are refused.
    const reference = `hot-ref-${payer.user.id.slice(0, 8)}`;
    for (let i = 0; i < 5; i++) calls.splice(10 + i * 20, 0, () => send(`ref-${i}-${payer.user.id}`, 'hot', reference));
    const sameReference = new Set([10, 30, 50, 70, 90]);
    const watch = countBatches(t);
    const results = await Promise.allSettled(calls.map((call) => call()));
    watch.stop();
    const codeOf = (r: PromiseSettledResult<unknown>) =>
      r.status === 'fulfilled' ? 'ok' : r.reason instanceof DomainError ? r.reason.code : String(r.reason);
    const ok = new Set(
      results.flatMap((r) =>
        r.status === 'fulfilled' ? [(r as PromiseFulfilledResult<{ id: string }>).value.id] : [],
      ),
    );
    results.slice(0, 105).forEach((r, i) => {
      if (!sameReference.has(i)) expect(['ok', 'INSUFFICIENT_FUNDS']).toContain(codeOf(r));
    });
    const referenced = [...sameReference].map((i) => codeOf(results[i]!));
    expect(referenced.filter((c) => c === 'ok').length).toBeLessThanOrEqual(1);
    for (const code of referenced) expect(['ok', 'CONFLICT', 'INSUFFICIENT_FUNDS']).toContain(code);
    for (let i = 105; i < results.length; i += 4) {
      const [twin1, twin2, other1, other2] = results.slice(i, i + 4).map(codeOf);
      if (twin1 === 'ok' && twin2 === 'ok')
        expect((results[i] as PromiseFulfilledResult<{ id: string }>).value.id).toBe(
          (results[i + 1] as PromiseFulfilledResult<{ id: string }>).value.id,
        );
      else if (twin1 !== twin2) expect([twin1, twin2]).toContain('CONFLICT');
      expect([other1, other2].filter((c) => c === 'ok').length).toBeLessThanOrEqual(1);
      if ([other1, other2].includes('ok'))
        expect([other1, other2].some((c) => c === 'IDEMPOTENCY_KEY_REUSED' || c === 'CONFLICT')).toBe(true);
    }
    expect(ok.size).toBe(60);
    expect(await ledger.balances(t.services.db, 'sandbox', payer.user.id)).toEqual({ available: 0n, held: 0n });
    expect(await ledger.balances(t.services.db, 'sandbox', payee.user.id)).toEqual({
      available: 30_000n,
      held: 0n,
    });
    const sent = await t.services.wallet.transactions(principal, { type: 'TRANSFER_OUT' }, 1, 100);
    expect(new Set(sent.transactions.map((row) => row.id))).toEqual(ok);
    // One transaction.completed event per transfer moved, for each side.
    const events = await queryRows<{ id: string; n: number }>(
      t.services.db,
      sql`select data->>'id' as id, count(*)::int as n from events
          where user_id = ${payer.user.id} and type = 'transaction.completed' and data->>'type' = 'TRANSFER_OUT'
          group by 1`,
    );
    expect(new Set(events.map((e) => e.id))).toEqual(ok);
    expect(events.every((e) => e.n === 1)).toBe(true);
    const incoming = await queryRows<{ n: number }>(
      t.services.db,
      sql`select count(*)::int as n from events
          where user_id = ${payee.user.id} and type = 'transaction.completed' and data->>'type' = 'TRANSFER_IN'`,
    );
    expect(incoming[0]!.n).toBe(60);
    expect(await ledger.totalOf(t.services.db, 'sandbox')).toBe(0n);
    expect(watch.counted.batches).toBeGreaterThan(0);
  });
});
