import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeNotices } from '../../scripts/admin/recon-commands.js';
import { deposits, payouts } from '../../src/db/wallet-schema.js';
import { ledgerHolds } from '../../src/db/ledger-schema.js';
import { chainSends } from '../../src/db/chain-schema.js';
import { solanaWallets } from '../../src/db/solana-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { matchRecords } from '../../src/domain/reconciliation/matcher.js';
import { Reconciliation } from '../../src/domain/reconciliation/reconciliation-service.js';
import type { ListWindow, ProviderRecord } from '../../src/domain/reconciliation/records.js';
import { billsSource, chainSource, paymentsSource } from '../../src/domain/reconciliation/sources.js';
import { billRecords } from '../../src/db/bills-schema.js';
import { FlutterwaveBillsProvider } from '../../src/domain/bills/flutterwave-bills-provider.js';
import type { SolanaChain } from '../../src/domain/solana/chain.js';
import { readReconciliation } from '../../src/observability/db-gauges.js';
import { registry } from '../../src/observability/metrics.js';
import type { TestApp } from '../helpers/app.js';
import { flutterwaveAgainst, startFlutterwaveReconciliation } from '../helpers/reconciliation.js';
import type { FakeFlutterwave } from '../fakes/flutterwave.js';

const DAY = '2026-03-10';
const at = (hh: number, mm = 0) =>
  new Date(`${DAY}T${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}:00.000Z`);
const HOUR = 3_600_000;

/** A chain whose signature lists the test writes: what the custodial wallets signed, as the chain says. */
function stubChain(signed: Map<string, ProviderRecord[]>): SolanaChain {
  return {
    network: 'devnet',
    signedBy: async (address: string, window: ListWindow) =>
      (signed.get(address) ?? []).filter((r) => r.at >= window.from && r.at < window.to),
  } as unknown as SolanaChain;
}

describe('reconciliation', () => {
  let t: TestApp;
  let fake: FakeFlutterwave;
  let clock: ManualClock;
  let recon: Reconciliation;
  let userId: string;
  const signed = new Map<string, ProviderRecord[]>();
  let stop: () => Promise<void>;

  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-03-11T06:00:00.000Z'));
    ({ t, fake, recon, userId, stop } = await startFlutterwaveReconciliation(clock, (flutterwave) => [
      // Settlements have their own file (settlements.test.ts): here, a provider that settles nothing.
      paymentsSource('production', Object.assign(Object.create(flutterwave), { listSettlements: undefined })),
      chainSource('production', stubChain(signed))!,
    ]));
  });
  afterAll(() => stop());

  const owner = () => ({ userId, environment: 'production' as const });

  async function ourDeposit(amount: bigint, createdAt: Date, status: 'completed' | 'failed' = 'completed') {
    const [row] = await t.services.db
      .insert(deposits)
      .values({
        ...owner(),
        reference: `DEP-${crypto.randomUUID()}`,
        method: 'card',
        amount,
        status,
        provider: 'flutterwave',
        createdAt,
      })
      .returning();
    return row!;
  }

  async function ourPayout(amount: bigint, createdAt: Date) {
    const [hold] = await t.services.db
      .insert(ledgerHolds)
      .values({ ...owner(), amount: amount + 1075n, reference: 'hold', status: 'captured' })
      .returning();
    const [row] = await t.services.db
      .insert(payouts)
      .values({
        ...owner(),
        reference: `PAY-${crypto.randomUUID()}`,
        amount,
        fee: 1075n,
        bankCode: '044',
        bankName: 'Access Bank',
        accountNumber: '0690000040',
        accountName: 'Alexis Sanchez',
        status: 'completed',
        holdId: hold!.id,
        provider: 'flutterwave',
        createdAt,
      })
      .returning();
    return row!;
  }

  it('a clean day: every record on both sides matches, no break, clearing zero', async () => {
    const d1 = await ourDeposit(150_000n, at(9));
    const d2 = await ourDeposit(2_550n, at(10, 30));
    fake.addCharge(`pgw-${d1.id}`, 'succeeded', 1500, at(9, 1));
    fake.addCharge(`pgw-${d2.id}`, 'succeeded', 25.5, at(10, 30));
    // Failed on both sides, and a pending charge the gateway never recorded: nothing moved, nothing to say.
    const d3 = await ourDeposit(9_900n, at(11), 'failed');
    fake.addCharge(`pgw-${d3.id}`, 'failed', 99, at(11));
    fake.addCharge('pgw-abandoned', 'pending', 10, at(12));
    const p1 = await ourPayout(500_000n, at(13));
    fake.addTransfer(`pgw-${p1.id}`, 5000, 'SUCCESSFUL', at(13));
    // The day before and after are listed by the provider too (its filter is by date): not this day's.
    fake.addCharge('pgw-yesterday', 'succeeded', 70, new Date('2026-03-09T23:00:00.000Z'));
    fake.addTransfer('pgw-tomorrow', 70, 'SUCCESSFUL', new Date('2026-03-11T01:00:00.000Z'));

    // Past flutterwave's 12-hour window after the day: its clearing is due, and zero.
    clock.set(new Date('2026-03-11T13:00:00.000Z'));
    const run = await recon.run({ environment: 'production', date: DAY, trigger: 'manual' });
    expect(run.outcome).toBe('ok');
    expect(run.breaks).toBe(0);
    const flw = run.sources.find((s) => s.provider === 'flutterwave')!;
    expect(flw).toMatchObject({ ours: 4, theirs: 5, breaks: 0, clearingMinor: '0', clearingDue: true });
    // The day's items only: four pairs and the abandoned charge, not the neighbouring days' rows.
    expect(flw.matched).toBe(5);
    expect(await recon.breaks({ open: true })).toEqual([]);
    // The lists were read page by page.
    expect(fake.requests.filter((r) => r.path.startsWith('/v3/transactions')).length).toBeGreaterThan(1);
  });

  it('disagreeing records: a missing deposit, a doubled payout, a wrong amount, an unknown transfer on chain — exactly those breaks', async () => {
    const day = '2026-03-12';
    const on = (h: number) => new Date(`${day}T${String(h).padStart(2, '0')}:00:00.000Z`);
    clock.set(new Date('2026-03-13T06:00:00.000Z'));
    // A deposit the provider collected that the gateway has no record of.
    fake.addCharge('pgw-lost-deposit', 'succeeded', 300, on(8));
    // A payout the provider sent twice under one reference.
    const doubled = await ourPayout(200_000n, on(9));
    fake.addTransfer(`pgw-${doubled.id}`, 2000, 'SUCCESSFUL', on(9));
    fake.addTransfer(`pgw-${doubled.id}`, 2000, 'SUCCESSFUL', on(9));
    // A deposit credited with a different amount than the provider collected.
    const wrong = await ourDeposit(100_000n, on(10));
    fake.addCharge(`pgw-${wrong.id}`, 'succeeded', 999, on(10));
    // A matched deposit beside them, so the breaks are not "everything".
    const fine = await ourDeposit(40_000n, on(11));
    fake.addCharge(`pgw-${fine.id}`, 'succeeded', 400, on(11));
    // A custodial wallet: one transfer the gateway signed, one it did not.
    const address = `Wa11et${crypto.randomUUID().replaceAll('-', '')}`;
    await t.services.db.insert(solanaWallets).values({
      ...owner(),
      address,
      encryptedSecret: 'x',
      wrappedDataKey: 'x',
      keyVersion: 1,
    });
    await t.services.db.insert(chainSends).values({
      ...owner(),
      family: 'solana',
      network: 'devnet',
      kind: 'native',
      fromAddress: address,
      toAddress: 'Elsewhere1111',
      amountRaw: 1_000_000n,
      decimals: 9,
      txHash: 'sig-known',
      wire: 'x',
      validThroughHeight: 1n,
      status: 'confirmed',
      createdAt: on(12),
    });
    const chainRecord = (signature: string, h: number): ProviderRecord => ({
      reference: signature,
      providerRef: signature,
      amount: null,
      currency: 'SOL',
      status: 'succeeded',
      at: on(h),
    });
    signed.set(address, [chainRecord('sig-known', 12), chainRecord('sig-unknown', 14)]);

    const run = await recon.run({ environment: 'production', date: day, trigger: 'daily' });
    expect(run.outcome).toBe('breaks');
    const found = (await recon.breaks({ open: true })).map(
      (b) => `${b.provider} ${b.itemType} ${b.reference} ${b.kind}`,
    );
    expect(found.sort()).toEqual(
      [
        'flutterwave deposit pgw-lost-deposit missing_ours',
        `flutterwave payout pgw-${doubled.id} missing_ours`,
        `flutterwave deposit pgw-${wrong.id} amount_differs`,
        'solana-devnet chain_transfer sig-unknown missing_ours',
      ].sort(),
    );
    const amountBreak = (await recon.breaks()).find((b) => b.kind === 'amount_differs')!;
    expect(amountBreak).toMatchObject({ ourAmount: '100000', theirAmount: '99900', currency: 'NGN' });
    // Clearing, gateway minus provider (deposits debit it, payouts credit it):
    // lost deposit +30,000, doubled payout −200,000, wrong amount −100 → −170,100 kobo.
    const flw = run.sources.find((s) => s.provider === 'flutterwave')!;
    expect(flw.clearingMinor).toBe('-170100');

    // A second run of the same day finds the same breaks: no duplicates.
    await recon.run({ environment: 'production', date: day, trigger: 'manual' });
    expect(await recon.breaks({ open: true })).toHaveLength(4);
  });

  it('clearing non-zero past the provider window raises its metric; inside the window it does not', async () => {
    // The day ended 2026-03-13 00:00; flutterwave's window is 12 h. At 06:00 it is still open.
    clock.set(new Date('2026-03-13T06:00:00.000Z'));
    await readReconciliation(recon);
    let text = await registry.metrics();
    expect(text).toMatch(
      /gateway_reconciliation_clearing_balance_minor\{environment="production",provider="flutterwave"\} -170100/,
    );
    expect(text).toMatch(
      /gateway_reconciliation_clearing_overdue\{environment="production",provider="flutterwave"\} 0/,
    );
    expect((await recon.notices()).overdueClearing).toEqual([]);

    clock.set(new Date('2026-03-13T12:00:00.000Z'));
    await readReconciliation(recon);
    text = await registry.metrics();
    expect(text).toMatch(
      /gateway_reconciliation_clearing_overdue\{environment="production",provider="flutterwave"\} 1/,
    );
    const notices = await recon.notices();
    expect(describeNotices(notices, 72).join('\n')).toMatch(
      /flutterwave \(production\) clearing is -170100 kobo past its settlement window/,
    );
    expect(text).toMatch(
      /gateway_reconciliation_breaks_open\{environment="production",provider="flutterwave",kind="missing_ours"\} 2/,
    );
  });

  it('a break older than the configured age raises the aged metric; resolving it with a note lowers it', async () => {
    await readReconciliation(recon);
    expect(await registry.metrics()).toMatch(/^gateway_reconciliation_aged_breaks 0$/m);
    // Detected at 2026-03-13 06:00; 72 h later it is aged.
    clock.set(new Date('2026-03-16T06:00:01.000Z'));
    await readReconciliation(recon);
    expect(await registry.metrics()).toMatch(/^gateway_reconciliation_aged_breaks 4$/m);
    expect(describeNotices(await recon.notices(), 72)[0]).toMatch(/4 open break\(s\) older than 72 h/);

    const [first] = await recon.breaks({ open: true });
    await expect(recon.resolve(first!.id, '  ')).rejects.toThrow(/note is required/);
    const resolved = await recon.resolve(first!.id, 'Provider confirmed the duplicate; recall requested.');
    expect(resolved).toMatchObject({
      status: 'resolved',
      resolutionNote: 'Provider confirmed the duplicate; recall requested.',
    });
    await expect(recon.resolve(first!.id, 'again')).rejects.toThrow(/resolved, not open/);
    await readReconciliation(recon);
    expect(await registry.metrics()).toMatch(/^gateway_reconciliation_aged_breaks 3$/m);
  });

  it('a break the provider later agrees with clears on the next run of that day', async () => {
    const day = '2026-03-14';
    const late = await ourDeposit(12_300n, new Date(`${day}T09:00:00.000Z`));
    await recon.run({ environment: 'production', date: day, trigger: 'manual' });
    const [missing] = (await recon.breaks({ open: true })).filter((b) => b.reference === `pgw-${late.id}`);
    expect(missing).toMatchObject({ kind: 'missing_theirs', ourAmount: '12300', theirAmount: null });
    fake.addCharge(`pgw-${late.id}`, 'succeeded', 123, new Date(`${day}T09:02:00.000Z`));
    const rerun = await recon.run({ environment: 'production', date: day, trigger: 'manual' });
    expect(rerun.outcome).toBe('ok');
    expect((await recon.breaks()).find((b) => b.id === missing!.id)).toMatchObject({ status: 'cleared' });
    // Other days' breaks are untouched by this day's run.
    expect((await recon.breaks({ open: true })).length).toBe(3);
  });

  it('bills: a payment the provider completed that the gateway recorded as failed is status_differs; an agreeing one matches', async () => {
    const bills = new Reconciliation(
      t.services.db,
      clock,
      [
        billsSource(
          'production',
          new FlutterwaveBillsProvider({ secretKey: fake.v3SecretKey, baseUrl: `${fake.url}/v3` }),
        ),
      ],
      { settlementHours: 24, settlementHoursByProvider: {}, breakMaxAgeMs: 72 * HOUR },
    );
    // A day of this test's own: the run reconciles every production bill of its day, and a worker's
    // earlier files (their bills made today) share its database on PGlite.
    const day = '2026-04-17';
    const madeAt = new Date(`${day}T12:00:00.000Z`);
    const bill = async (status: 'SUCCESS' | 'FAILED') => {
      const [row] = await t.services.db
        .insert(billRecords)
        .values({
          ...owner(),
          reference: `BILL-${crypto.randomUUID()}`,
          billerCode: 'BIL099',
          itemCode: 'AT099',
          customer: '08031234567',
          amount: 50_000n,
          type: 'AIRTIME',
          status,
          billerName: 'MTN',
          provider: 'flutterwave',
          createdAt: madeAt,
          updatedAt: madeAt,
        })
        .returning();
      // The provider's own record, paid under the gateway's provider reference, on the same day.
      await new FlutterwaveBillsProvider({ secretKey: fake.v3SecretKey, baseUrl: `${fake.url}/v3` }).pay({
        billerCode: 'BIL099',
        itemCode: 'AT099',
        customer: '08031234567',
        amount: 50_000n,
        reference: `pgw-${row!.id}`,
      });
      fake.bills.get(`pgw-${row!.id}`)!['created_at'] = madeAt.toISOString();
      return row!;
    };
    await bill('SUCCESS');
    const failed = await bill('FAILED');
    clock.set(new Date(madeAt.getTime() + 3 * 86_400_000));
    const run = await bills.run({ environment: 'production', date: day, trigger: 'manual' });
    expect(run.sources[0]).toMatchObject({ provider: 'flutterwave-bills', ours: 2, theirs: 2, matched: 1, breaks: 1 });
    const found = (await bills.breaks({ open: true })).filter((b) => b.provider === 'flutterwave-bills');
    expect(found.map((b) => [b.reference, b.kind, b.ourStatus, b.theirStatus])).toEqual([
      [`pgw-${failed.id}`, 'status_differs', 'failed', 'succeeded'],
    ]);
    await bills.resolve(found[0]!.id, 'Biller confirmed delivery; the record is corrected by support.');
  });

  it('an unreadable provider fails its part of the run and keeps its open breaks', async () => {
    const broken = new Reconciliation(
      t.services.db,
      clock,
      [
        paymentsSource(
          'production',
          flutterwaveAgainst(fake, { clientId: 'x', clientSecret: 'x', v3SecretKey: 'FLWSECK_TEST-wrong' }),
        ),
      ],
      { settlementHours: 24, settlementHoursByProvider: {}, breakMaxAgeMs: HOUR },
    );
    const open = (await recon.breaks({ open: true })).length;
    const run = await broken.run({ environment: 'production', date: '2026-03-12', trigger: 'manual' });
    expect(run.outcome).toBe('failed');
    expect(run.sources[0]!.error).toMatch(/credentials/);
    expect(await recon.breaks({ open: true })).toHaveLength(open);
    // Said where an operator looks: the notice and its metric.
    const notices = await recon.notices();
    expect(notices.unreadProviders).toEqual([
      expect.objectContaining({ provider: 'flutterwave', environment: 'production' }),
    ]);
    expect(describeNotices(notices, 72).join('\n')).toMatch(/flutterwave \(production\) could not be read/);
    await readReconciliation(recon);
    expect(await registry.metrics()).toMatch(
      /gateway_reconciliation_provider_unread\{environment="production",provider="flutterwave"\} 1/,
    );
  });
});

describe('the matcher', () => {
  const rec = (reference: string, amount: bigint, status: 'succeeded' | 'pending' | 'failed' = 'succeeded') => ({
    itemType: 'payout',
    reference,
    providerRef: null,
    amount,
    currency: 'NGN',
    status,
    at: new Date(0),
  });
  const theirs = (reference: string, amount: bigint, status: 'succeeded' | 'pending' | 'failed' = 'succeeded') => ({
    reference,
    providerRef: `p-${reference}`,
    amount,
    currency: 'NGN',
    status,
    at: new Date(0),
  });
  it('names status before amount, and only money that moved on one side is missing', () => {
    const result = matchRecords(
      'payout',
      [rec('a', 100n), rec('b', 100n, 'succeeded'), rec('c', 100n), rec('d', 5n, 'pending')],
      [theirs('a', 100n), theirs('b', 90n, 'failed'), theirs('e', 7n, 'failed')],
    );
    expect(result.breaks.map((b) => `${b.reference} ${b.kind}`)).toEqual(['b status_differs', 'c missing_theirs']);
    expect(result.matched).toHaveLength(3);
  });
});
