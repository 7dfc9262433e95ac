import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deposits } from '../../src/db/wallet-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import type { Reconciliation } from '../../src/domain/reconciliation/reconciliation-service.js';
import { paymentsSource } from '../../src/domain/reconciliation/sources.js';
import type { TestApp } from '../helpers/app.js';
import { startFlutterwaveReconciliation } from '../helpers/reconciliation.js';
import type { FakeFlutterwave } from '../fakes/flutterwave.js';

const on = (day: string, hh: number) => new Date(`${day}T${String(hh).padStart(2, '0')}:00:00.000Z`);

describe('reconciliation: Flutterwave settlements against completed collections', () => {
  let t: TestApp;
  let fake: FakeFlutterwave;
  let clock: ManualClock;
  let recon: Reconciliation;
  let userId: string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-06-11T06:00:00.000Z'));
    ({ t, fake, recon, userId, stop } = await startFlutterwaveReconciliation(clock, (flutterwave) => [
      paymentsSource('production', flutterwave),
    ]));
  });
  afterAll(() => stop());

  /** A deposit the gateway completed (or failed), and the provider's record of the charge. */
  async function collected(kobo: bigint, createdAt: Date, status: 'completed' | 'failed' = 'completed') {
    const [row] = await t.services.db
      .insert(deposits)
      .values({
        userId,
        environment: 'production',
        reference: `DEP-${crypto.randomUUID()}`,
        method: 'card',
        amount: kobo,
        status,
        provider: 'flutterwave',
        createdAt,
      })
      .returning();
    fake.addCharge(`pgw-${row!.id}`, status === 'completed' ? 'succeeded' : 'failed', Number(kobo) / 100, createdAt);
    return { ref: `pgw-${row!.id}`, naira: Number(kobo) / 100 };
  }
  // Test files of a worker share the embedded database: this file's days are its own, and it
  // reads only the breaks of its days.
  const DAYS = ['2026-06-10', '2026-06-11', '2026-06-12', '2026-06-15'];
  const openBreaks = async () => (await recon.breaks({ open: true })).filter((b) => DAYS.includes(b.businessDate));
  const run = (date: string) => recon.run({ environment: 'production', date, trigger: 'manual' });
  const flw = (r: Awaited<ReturnType<typeof run>>) => r.sources.find((s) => s.provider === 'flutterwave')!;

  it('a clean day: every completed collection settled, each settlement nets to its transactions less fees — no break, clearing zero', async () => {
    const day = '2026-06-10';
    const a = await collected(150_000n, on(day, 9));
    const b = await collected(2_550n, on(day, 10));
    await collected(9_900n, on(day, 11), 'failed');
    fake.addSettlement(
      [
        { txRef: a.ref, amount: a.naira, fee: 21 },
        { txRef: b.ref, amount: b.naira, fee: 0.36 },
      ],
      on('2026-06-11', 2),
    );
    clock.set(on('2026-06-11', 13));
    const result = await run(day);
    expect(result.outcome).toBe('ok');
    expect(flw(result)).toMatchObject({ breaks: 0, clearingMinor: '0', clearingDue: true });
    // The settlement was read through both endpoints.
    expect(fake.requests.some((r) => r.path.startsWith('/v3/settlements?'))).toBe(true);
    expect(fake.requests.some((r) => /^\/v3\/settlements\/\d+$/.test(r.path))).toBe(true);
    // The day the settlement was made: its net is checked there, and agrees.
    expect((await run('2026-06-11')).outcome).toBe('ok');
    expect(await openBreaks()).toEqual([]);
  });

  it('a completed collection in no settlement is a break only past the window; its settlement arriving clears it and the clearing', async () => {
    const day = '2026-06-12';
    const c = await collected(480_000n, on(day, 15));
    clock.set(on('2026-06-13', 6));
    const early = await run(day);
    expect(early.outcome).toBe('ok');
    expect(flw(early)).toMatchObject({ breaks: 0, clearingMinor: '0', clearingDue: false });

    clock.set(on('2026-06-13', 13));
    const late = await run(day);
    expect(late.outcome).toBe('breaks');
    const open = await openBreaks();
    expect(open.map((x) => [x.kind, x.itemType, x.reference, x.ourAmount, x.theirAmount])).toEqual([
      ['missing_theirs', 'settlement', c.ref, '480000', null],
    ]);
    // Collected, not settled: the clearing is what the provider still holds, and it is overdue.
    expect(flw(late)).toMatchObject({ clearingMinor: '-480000', clearingDue: true });
    expect((await recon.notices()).overdueClearing).toContainEqual(
      expect.objectContaining({ provider: 'flutterwave', clearingMinor: '-480000', businessDate: day }),
    );

    fake.addSettlement([{ txRef: c.ref, amount: c.naira, fee: 67.2 }], on('2026-06-13', 14));
    clock.set(on('2026-06-13', 15));
    const settled = await run(day);
    expect(settled.outcome).toBe('ok');
    expect(flw(settled)).toMatchObject({ breaks: 0, clearingMinor: '0' });
    expect(await openBreaks()).toEqual([]);
  });

  it('a settled collection the gateway does not know is missing_ours; a net that is not the transactions less fees is amount_differs', async () => {
    const day = '2026-06-15';
    const known = await collected(100_000n, on(day, 1));
    const stranger = `pgw-${crypto.randomUUID()}`;
    const id = fake.addSettlement(
      [
        { txRef: known.ref, amount: known.naira, fee: 14 },
        { txRef: stranger, amount: 700, fee: 9.8 },
      ],
      on(day, 3),
      // (1000 − 14) + (700 − 9.8) = 1676.20; the provider says it paid 1,675.20.
      1675.2,
    );
    clock.set(on('2026-06-16', 13));
    const result = await run(day);
    expect(result.outcome).toBe('breaks');
    const open = await openBreaks();
    expect(
      open
        .map((x) => [x.kind, x.itemType, x.reference, x.ourAmount, x.theirAmount])
        .sort((p, q) => (p[0]! < q[0]! ? -1 : 1)),
    ).toEqual([
      ['amount_differs', 'settlement_net', `settlement-${id}`, '167620', '167520'],
      ['missing_ours', 'settlement', stranger, null, '70000'],
    ]);
  });
});
