import { Connection, Keypair, LAMPORTS_PER_SOL, type PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcChain } from '../../src/domain/solana/rpc-chain.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { dayWindow, parseSettlementHours } from '../../src/domain/reconciliation/reconciliation-service.js';
import { FakeSolanaRpc } from '../fakes/solana-rpc.js';
import { FlutterwaveBillsProvider } from '../../src/domain/bills/flutterwave-bills-provider.js';
import { SandboxBillsProvider } from '../../src/domain/bills/sandbox-bills-provider.js';
import { ManualClock } from '../../src/domain/clock.js';
import { laneOf } from '../../src/domain/jobs/lanes.js';
import { PaycrestProvider } from '../../src/domain/offramp/paycrest-provider.js';
import { SandboxPaymentsProvider } from '../../src/domain/payments/sandbox-payments-provider.js';
import { minorUnitsOf } from '../../src/domain/reconciliation/records.js';
import { FakeFlutterwave } from '../fakes/flutterwave.js';
import { FakePaycrest } from '../fakes/paycrest.js';

const wide = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };

describe('providers list their own records for reconciliation', () => {
  let flw: FakeFlutterwave;
  let paycrest: FakePaycrest;
  beforeAll(async () => {
    flw = await new FakeFlutterwave().start();
    paycrest = await new FakePaycrest().start();
  });
  afterAll(async () => {
    await flw.stop();
    await paycrest.stop();
  });

  it('the sandbox payments provider lists the charges and transfers it made, with their outcomes', async () => {
    const clock = new ManualClock(new Date());
    const sandbox = new SandboxPaymentsProvider(clock);
    const card = await sandbox.tokenizeCard({ number: '5531886652142950', expMonth: 12, expYear: 2040, cvv: '564' });
    const charge = await sandbox.chargeCard({ reference: 'pgw-c1', amount: 5_000n, cardToken: card.token });
    await sandbox.authorize({ providerRef: charge.providerRef, step: 'requires_pin' }, { type: 'pin', pin: '3310' });
    await sandbox.authorize({ providerRef: charge.providerRef, step: 'requires_otp' }, { type: 'otp', otp: '12345' });
    const send = { bankCode: '044', accountName: 'X', narration: 'n' };
    await sandbox.transfer({ reference: 'pgw-t1', amount: 7_000n, accountNumber: '0690000040', ...send });
    await sandbox.transfer({ reference: 'pgw-t2', amount: 8_000n, accountNumber: '0000000000', ...send });
    expect(await sandbox.listCollections(wide)).toEqual([
      expect.objectContaining({ reference: 'pgw-c1', amount: 5_000n, status: 'succeeded' }),
    ]);
    expect((await sandbox.listTransfers(wide)).map((r) => [r.reference, r.amount, r.status])).toEqual([
      ['pgw-t1', 7_000n, 'succeeded'],
      ['pgw-t2', 8_000n, 'failed'],
    ]);
    expect(await sandbox.listTransfers({ from: new Date(0), to: new Date(1) })).toEqual([]);
  });

  it('the sandbox bills provider lists the payments it received', async () => {
    const bills = new SandboxBillsProvider();
    await bills.pay({
      billerCode: 'BIL099',
      itemCode: 'AT099',
      customer: '08031234567',
      amount: 10_000n,
      reference: 'b-1',
    });
    expect(await bills.listPayments(wide)).toEqual([
      expect.objectContaining({ reference: 'b-1', amount: 10_000n, status: 'succeeded' }),
    ]);
  });

  it('Flutterwave bills: v3 GET /bills, every page, under the reference the gateway sent', async () => {
    flw.v3PageSize = 2;
    const provider = new FlutterwaveBillsProvider({ secretKey: flw.v3SecretKey, baseUrl: `${flw.url}/v3` });
    for (let i = 0; i < 5; i++)
      await provider.pay({
        billerCode: 'BIL099',
        itemCode: 'AT099',
        customer: `0803000000${i}`,
        amount: 10_050n,
        reference: `bill-${i}`,
      });
    const listed = await provider.listPayments(wide);
    expect(listed.map((r) => r.reference).sort()).toEqual(['bill-0', 'bill-1', 'bill-2', 'bill-3', 'bill-4']);
    expect(listed.every((r) => r.amount === 10_050n && r.status === 'succeeded')).toBe(true);
    expect(flw.requests.filter((r) => r.path.startsWith('/v3/bills?')).length).toBeGreaterThanOrEqual(3);
  });

  it('Paycrest: GET /v1/sender/orders, paged, amounts in the token base units', async () => {
    const provider = new PaycrestProvider({
      apiKey: paycrest.apiKey,
      apiSecret: paycrest.apiSecret,
      baseUrl: paycrest.url,
    });
    const recipient = {
      institution: 'GTBINGLA',
      accountIdentifier: '0123456789',
      accountName: 'A',
      memo: 'm',
      currency: 'NGN' as const,
    };
    const created = await provider.createOrder({
      token: 'USDT',
      network: 'base',
      amount: '12.5',
      rate: '1500',
      recipient,
      reference: 'o-1',
    });
    const listed = await provider.listOrders(wide);
    expect(listed).toEqual([
      expect.objectContaining({
        reference: created.providerOrderId,
        amount: 12_500_000n,
        currency: 'USDT@base',
        status: 'pending',
      }),
    ]);
  });

  it('amounts never pass through a float, and a sub-unit amount is refused', () => {
    expect(minorUnitsOf(19.99)).toBe(1999n);
    expect(minorUnitsOf('500.0000')).toBe(50_000n);
    expect(minorUnitsOf('0.000001', 6)).toBe(1n);
    expect(() => minorUnitsOf('1.005')).toThrow(/decimals/);
  });

  it('the reconciliation job runs in the maintenance lane', () => {
    expect(laneOf('recon.daily')).toBe('maintenance');
  });
});

describe('a Solana RPC chain lists what a wallet signed', () => {
  let rpc: FakeSolanaRpc;
  beforeAll(async () => {
    rpc = await new FakeSolanaRpc().start();
  });
  afterAll(() => rpc.stop());

  it('signatures the wallet signed in the window, not the transfers others sent it', async () => {
    const wallet = Keypair.generate();
    const other = Keypair.generate();
    rpc.airdrop(wallet.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
    rpc.airdrop(other.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
    const connection = new Connection(rpc.url, 'confirmed');
    const send = async (from: Keypair, to: PublicKey, lamports: bigint) => {
      const tx = new Transaction({
        feePayer: from.publicKey,
        blockhash: rpc.svm.latestBlockhash(),
        lastValidBlockHeight: 0,
      });
      tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }));
      tx.sign(from);
      return connection.sendRawTransaction(tx.serialize());
    };
    const mine = [await send(wallet, other.publicKey, 1_000n), await send(wallet, other.publicKey, 2_000n)];
    await send(other, wallet.publicKey, 3_000n);
    const chain = new RpcChain('devnet', rpc.url);
    const listed = await chain.signedBy(wallet.publicKey.toBase58(), wide);
    expect(listed.map((r) => r.reference).sort()).toEqual([...mine].sort());
    expect(listed.every((r) => r.status === 'succeeded' && r.amount === null)).toBe(true);
    expect(await chain.signedBy(wallet.publicKey.toBase58(), { from: new Date(0), to: new Date(1000) })).toEqual([]);
  });
});

describe('reconciliation settings', () => {
  it('per-provider settlement windows parse; a malformed list or a short operator token is refused', () => {
    const config = loadConfig({ RECON_SETTLEMENT_HOURS_BY_PROVIDER: 'flutterwave=24,paycrest=2' });
    expect(parseSettlementHours(config.RECON_SETTLEMENT_HOURS_BY_PROVIDER)).toEqual({ flutterwave: 24, paycrest: 2 });
    expect(parseSettlementHours(loadConfig({}).RECON_SETTLEMENT_HOURS_BY_PROVIDER)).toEqual({});
    expect(() => loadConfig({ RECON_SETTLEMENT_HOURS_BY_PROVIDER: 'flutterwave:24' })).toThrow(ConfigError);
    expect(() => loadConfig({ RECON_ENVIRONMENTS: 'staging' })).toThrow(ConfigError);
    expect(() => loadConfig({ OPERATOR_TOKEN: 'short' })).toThrow(ConfigError);
  });

  it('a day is a UTC day; anything else names --date', () => {
    expect(dayWindow('2026-02-28')).toEqual({
      from: new Date('2026-02-28T00:00:00.000Z'),
      to: new Date('2026-03-01T00:00:00.000Z'),
    });
    expect(() => dayWindow('2026-02-30')).toThrow(/date must be a day/);
    expect(() => dayWindow('yesterday')).toThrow(/date must be a day/);
  });
});
