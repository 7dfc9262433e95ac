import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerPostings } from '../../src/db/ledger-schema.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { walletBalancesAt, walletStatement } from '../../src/domain/ledger/statements.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** What the model knows of one movement on a user's wallet or holds account. */
interface ModelEntry {
  user: number;
  account: 'wallet' | 'holds';
  amount: bigint;
  at: Date;
  kind: string;
  reference: string;
}

type Op =
  | { op: 'deposit'; user: number; amount: number }
  | { op: 'transfer'; from: number; to: number; amount: number }
  | { op: 'payout'; user: number; amount: number }
  | { op: 'settle'; pick: number; capture: boolean }
  | { op: 'reverse'; pick: number };

const amount = fc.integer({ min: 1, max: 5_000_000 });
const user = fc.integer({ min: 0, max: 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('deposit' as const), user, amount }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('transfer' as const), from: user, to: user, amount }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('payout' as const), user, amount }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), capture: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('reverse' as const), pick: fc.nat() }), weight: 2 },
);

describe('balances as of an instant and statements, against a model', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('match a simple model to the kobo for random histories of deposits, transfers, payouts and reversals', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 25 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 4 }),
        async (ops, ranges) => {
          const { db } = t.services;
          const users = await Promise.all(
            [0, 1].map(() => t.services.users.createUser({ email: `m-${randomUUID()}@example.test` })),
          );
          const ids = users.map((u) => u.id);
          const model: ModelEntry[] = [];
          const openHolds: { user: number; holdId: string; amount: bigint }[] = [];
          const reversible: { postingId: string; kind: string; lines: { user: number; amount: bigint }[] }[] = [];
          const postedAt = async (kind: string, reference: string) => {
            const [row] = await db
              .select({ createdAt: ledgerPostings.createdAt })
              .from(ledgerPostings)
              .where(and(eq(ledgerPostings.kind, kind), eq(ledgerPostings.reference, reference)));
            return row!.createdAt;
          };
          const refused = (error: unknown) => {
            if ((error as { code?: string }).code !== 'INSUFFICIENT_FUNDS') throw error;
            return undefined;
          };

          for (const step of ops) {
            if (step.op === 'deposit' || (step.op === 'transfer' && step.from === step.to)) {
              const who = step.op === 'deposit' ? step.user : step.from;
              const reference = randomUUID();
              const kobo = BigInt(step.amount);
              await db.transaction((tx) =>
                ledger.post(tx, {
                  environment: 'sandbox',
                  kind: 'deposit',
                  reference,
                  lines: [
                    { account: systemAccount('sandbox', 'provider_clearing'), amount: -kobo },
                    { account: walletOf('sandbox', ids[who]!), amount: kobo },
                  ],
                }),
              );
              const at = await postedAt('deposit', reference);
              model.push({ user: who, account: 'wallet', amount: kobo, at, kind: 'deposit', reference });
              const postingId = (await ledger.postingId(db, 'sandbox', 'deposit', reference))!;
              reversible.push({ postingId, kind: 'deposit', lines: [{ user: who, amount: kobo }] });
            } else if (step.op === 'transfer') {
              const reference = randomUUID();
              const kobo = BigInt(step.amount);
              const done = await db
                .transaction((tx) =>
                  ledger.post(tx, {
                    environment: 'sandbox',
                    kind: 'transfer',
                    reference,
                    lines: [
                      { account: walletOf('sandbox', ids[step.from]!), amount: -kobo },
                      { account: walletOf('sandbox', ids[step.to]!), amount: kobo },
                    ],
                  }),
                )
                .catch(refused);
              if (!done) continue;
              const at = await postedAt('transfer', reference);
              model.push({ user: step.from, account: 'wallet', amount: -kobo, at, kind: 'transfer', reference });
              model.push({ user: step.to, account: 'wallet', amount: kobo, at, kind: 'transfer', reference });
              const postingId = (await ledger.postingId(db, 'sandbox', 'transfer', reference))!;
              reversible.push({
                postingId,
                kind: 'transfer',
                lines: [
                  { user: step.from, amount: -kobo },
                  { user: step.to, amount: kobo },
                ],
              });
            } else if (step.op === 'payout') {
              const kobo = BigInt(step.amount);
              const holdId = await db
                .transaction((tx) =>
                  ledger.hold(tx, { environment: 'sandbox', userId: ids[step.user]! }, kobo, randomUUID()),
                )
                .catch(refused);
              if (!holdId) continue;
              const at = await postedAt('hold', holdId);
              model.push({ user: step.user, account: 'wallet', amount: -kobo, at, kind: 'hold', reference: holdId });
              model.push({ user: step.user, account: 'holds', amount: kobo, at, kind: 'hold', reference: holdId });
              openHolds.push({ user: step.user, holdId, amount: kobo });
            } else if (step.op === 'settle') {
              if (openHolds.length === 0) continue;
              const [hold] = openHolds.splice(step.pick % openHolds.length, 1);
              const kind = step.capture ? 'capture' : 'release';
              await db.transaction((tx) =>
                step.capture
                  ? ledger.capture(tx, hold!.holdId, hold!.amount / 10n, new Date())
                  : ledger.release(tx, hold!.holdId, new Date()),
              );
              const at = await postedAt(kind, hold!.holdId);
              model.push({
                user: hold!.user,
                account: 'holds',
                amount: -hold!.amount,
                at,
                kind,
                reference: hold!.holdId,
              });
              if (!step.capture)
                model.push({
                  user: hold!.user,
                  account: 'wallet',
                  amount: hold!.amount,
                  at,
                  kind,
                  reference: hold!.holdId,
                });
            } else {
              if (reversible.length === 0) continue;
              const [original] = reversible.splice(step.pick % reversible.length, 1);
              const done = await db.transaction((tx) => ledger.reverse(tx, original!.postingId)).catch(refused);
              if (!done) continue;
              const at = await postedAt('reversal', original!.postingId);
              for (const line of original!.lines)
                model.push({
                  user: line.user,
                  account: 'wallet',
                  amount: -line.amount,
                  at,
                  kind: 'reversal',
                  reference: original!.postingId,
                });
            }
          }

          // The model: sums of its entries, by instant (an entry counts from the millisecond it was posted in).
          const sum = (u: number, account: 'wallet' | 'holds', counts: (e: ModelEntry) => boolean) =>
            model.filter((e) => e.user === u && e.account === account && counts(e)).reduce((s, e) => s + e.amount, 0n);
          const times = [...new Set(model.map((e) => e.at.getTime()))].sort((a, b) => a - b);
          const instants = [...new Set(times.flatMap((ms) => [ms - 1, ms, ms + 1]))].map((ms) => new Date(ms));

          for (const u of [0, 1]) {
            const now = await walletBalancesAt(db, 'sandbox', ids[u]!);
            const available = sum(u, 'wallet', () => true);
            const pending = sum(u, 'holds', () => true);
            expect(now).toMatchObject({ available, pending, posted: available + pending });
            for (const at of instants) {
              const a = sum(u, 'wallet', (e) => e.at <= at);
              const p = sum(u, 'holds', (e) => e.at <= at);
              expect(await walletBalancesAt(db, 'sandbox', ids[u]!, at), `user ${u} at ${at.toISOString()}`).toEqual({
                currency: 'NGN',
                at,
                available: a,
                pending: p,
                posted: a + p,
              });
            }
          }

          // Statements of random ranges, walked page by page, against the model's wallet entries in order.
          const first = times[0] ?? Date.now();
          const last = times[times.length - 1] ?? first;
          const bounds = [new Date(first - 5), ...instants, new Date(last + 5)];
          for (const [i, j, pageSize] of ranges) {
            const a = bounds[i % bounds.length]!;
            const b = bounds[j % bounds.length]!;
            if (a.getTime() === b.getTime()) continue;
            const [from, to] = a < b ? [a, b] : [b, a];
            for (const u of [0, 1]) {
              const expected = model.filter((e) => e.user === u && e.account === 'wallet' && e.at >= from && e.at < to);
              const opening = sum(u, 'wallet', (e) => e.at < from);
              const lines = [];
              let after: string | undefined;
              let pages = 0;
              do {
                const page = await walletStatement(db, 'sandbox', ids[u]!, { from, to, limit: pageSize, after });
                expect(page.openingBalance).toBe(opening);
                expect(page.closingBalance).toBe(sum(u, 'wallet', (e) => e.at < to));
                expect(page.entryCount).toBe(expected.length);
                expect(page.totalCredits - page.totalDebits).toBe(page.closingBalance - page.openingBalance);
                lines.push(...page.lines);
                after = page.nextCursor ?? undefined;
                pages += 1;
              } while (after);
              expect(pages).toBe(Math.max(1, Math.ceil(expected.length / pageSize)));
              expect(lines.map((l) => ({ amount: l.amount, kind: l.kind, reference: l.reference }))).toEqual(
                expected.map((e) => ({ amount: e.amount, kind: e.kind, reference: e.reference })),
              );
              let running = opening;
              for (const [k, line] of lines.entries()) {
                running += line.amount;
                expect(line.balance, `line ${k}`).toBe(running);
                expect(line.postedAt).toEqual(expected[k]!.at);
              }
              expect(running).toBe(sum(u, 'wallet', (e) => e.at < to));
            }
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
