import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { DomainError } from '../../src/domain/errors.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';

/**
 * Transfers that reach the database as their own commit: a transfer statement sent outside a
 * transaction, or a batch's transaction (which begins with the batch's lock statement).
 */
function countTransferCommits() {
  const counted = { alone: 0, batches: 0, statements: 0 };
  const open = new WeakSet<object>();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: object, ...args: unknown[]) {
    const first = args[0] as { name?: string; text?: string } | string;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    const name = typeof first === 'string' ? undefined : first?.name;
    if (/^\s*begin\b/i.test(text)) open.add(this);
    else if (/^\s*(commit|rollback)\b/i.test(text)) open.delete(this);
    else if (name === 'wallet_transfer_batch_lock_v1') counted.batches++;
    else if (name === 'wallet_transfer_v2') {
      counted.statements++;
      if (!open.has(this)) counted.alone++;
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as never;
  return { counted, stop: () => (pg.Client.prototype.query = original) };
}

/**
 * One busy wallet, two gateway instances (each its own pool and its own batches) on one database:
 * its concurrent transfers are coalesced into few commits, and every request still gets its own
 * exact answer.
 */
describe.skipIf(!onPostgres)('a hot wallet under 1,000-way concurrency (PostgreSQL)', () => {
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

  it('commits concurrent transfers from one wallet in batches, each with its own answer, key, refusal and events', async () => {
    const payer = await seedTenant(a);
    const payees = [await seedTenant(a), await seedTenant(a), await seedTenant(a)];
    await a.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test-funding',
        reference: crypto.randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -100_000n },
          { account: walletOf('sandbox', payer.user.id), amount: 100_000n },
        ],
      }),
    );
    // The wallets' account ids are resolved (and cached) by a first transfer in each instance.
    for (const services of [a, b])
      await services.wallet.transfer(
        principalOf(payer.user.id),
        { amount: 0.01, recipient: payees[0]!.user.id },
        undefined,
      );
    const principal = principalOf(payer.user.id);
    // Every transfer moves ₦5 (500 kobo) of the 99,998 kobo left: exactly 199 can succeed, 498 kobo stay.
    type Call = { kind: 'unique' | 'twin' | 'other-body'; run: () => Promise<{ id: string }> };
    const calls: Call[] = [];
    const send = (instance: number, to: number, key: string | undefined, narration?: string) => {
      const services = instance % 2 === 0 ? a : b;
      const recipient = payees[to % payees.length]!.user.id;
      return () =>
        services.wallet.transfer(principal, { amount: 5, recipient, ...(narration ? { narration } : {}) }, key);
    };
    for (let i = 0; i < 700; i++) calls.push({ kind: 'unique', run: send(i, i, i % 7 === 0 ? undefined : `u-${i}`) });
    for (let i = 0; i < 100; i++) {
      // The same key and body twice, on the same instance or the other.
      calls.push({ kind: 'twin', run: send(i, i, `t-${i}`) });
      calls.push({ kind: 'twin', run: send(i + (i % 2), i, `t-${i}`) });
    }
    for (let i = 0; i < 50; i++) {
      calls.push({ kind: 'other-body', run: send(i, i, `o-${i}`, 'first') });
      calls.push({ kind: 'other-body', run: send(i + 1, i, `o-${i}`, 'second') });
    }
    const watch = countTransferCommits();
    const results = await Promise.allSettled(calls.map((c) => c.run()));
    watch.stop();

    const codeOf = (r: PromiseSettledResult<unknown>) =>
      r.status === 'fulfilled' ? 'ok' : r.reason instanceof DomainError ? r.reason.code : String(r.reason);
    const okIds = new Set<string>();
    results.forEach((r, i) => {
      const code = codeOf(r);
      expect(['ok', 'INSUFFICIENT_FUNDS', 'CONFLICT', 'IDEMPOTENCY_KEY_REUSED'], `call ${i}: ${code}`).toContain(code);
      if (r.status === 'fulfilled') okIds.add(r.value.id);
      if (calls[i]!.kind === 'unique') expect(['ok', 'INSUFFICIENT_FUNDS']).toContain(code);
    });
    // Each pair sharing a key: at most one transfer; a twin's second answer is the first's (or 409
    // while it ran); another body with the same key is refused (422, or 409 while the first ran).
    for (let i = 800; i < calls.length; i += 2) {
      const [first, second] = [results[i]!, results[i + 1]!];
      const codes = [codeOf(first), codeOf(second)];
      if (calls[i]!.kind === 'twin') {
        if (codes[0] === 'ok' && codes[1] === 'ok')
          expect((first as PromiseFulfilledResult<{ id: string }>).value.id).toBe(
            (second as PromiseFulfilledResult<{ id: string }>).value.id,
          );
        else if (codes[0] !== codes[1]) expect(codes).toContain('CONFLICT');
      } else {
        expect(codes.filter((c) => c === 'ok').length).toBeLessThanOrEqual(1);
        if (codes.includes('ok'))
          expect(codes.some((c) => c === 'IDEMPOTENCY_KEY_REUSED' || c === 'CONFLICT')).toBe(true);
      }
    }
    // Exactly as much money moved as there was, in exactly as many transfers as answered 'ok'.
    expect(okIds.size).toBe(199);
    expect(await ledger.balances(a.db, 'sandbox', payer.user.id)).toEqual({ available: 498n, held: 0n });
    let received = 0n;
    for (const payee of payees) received += (await ledger.balances(a.db, 'sandbox', payee.user.id)).available;
    expect(received).toBe(199n * 500n + 2n);
    expect(await ledger.totalOf(a.db, 'sandbox')).toBe(0n);
    const outgoing = await queryRows<{ id: string; amount: string }>(
      a.db,
      sql`select id, amount::text from wallet_transactions where user_id = ${payer.user.id} and type = 'TRANSFER_OUT' and amount = 500`,
    );
    expect(new Set(outgoing.map((r) => r.id))).toEqual(okIds);
    // One transaction.completed event per side of every transfer, for the payer each answered id once.
    const events = await queryRows<{ id: string; n: number }>(
      a.db,
      sql`select data->>'id' as id, count(*)::int as n from events
          where user_id = ${payer.user.id} and type = 'transaction.completed' and (data->>'amount')::numeric = 5
          group by 1`,
    );
    expect(new Set(events.map((e) => e.id))).toEqual(okIds);
    expect(events.every((e) => e.n === 1)).toBe(true);
    const incoming = await queryRows<{ n: number }>(
      a.db,
      sql`select count(*)::int as n from events
          where user_id = any(${`{${payees.map((p) => p.user.id).join(',')}}`}::uuid[]) and type = 'transaction.completed'
            and data->>'type' = 'TRANSFER_IN' and (data->>'amount')::numeric = 5`,
    );
    expect(incoming[0]!.n).toBe(199);
    // Coalesced: far fewer commits than transfers (without batching, one per transfer statement).
    expect(watch.counted.batches).toBeGreaterThan(0);
    expect(watch.counted.alone + watch.counted.batches).toBeLessThan(calls.length / 4);
  });
});
