import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainSends } from '../../src/db/chain-schema.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { ManualClock } from '../../src/domain/clock.js';
import { marketMakerSource } from '../../src/domain/reconciliation/balances.js';
import { Reconciliation } from '../../src/domain/reconciliation/reconciliation-service.js';
import { sandboxMarketMakers } from '../../src/domain/solana/sandbox-market-makers.js';
import { SOL_MINT, tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { readReconciliation } from '../../src/observability/db-gauges.js';
import { registry } from '../../src/observability/metrics.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { RECONCILIATION_SETTINGS } from '../helpers/reconciliation.js';

const DAY = '2026-05-01';
const USDC = tokenBySymbol('USDC')!.address;
const USDT = tokenBySymbol('USDT')!.address;
const BONK = tokenBySymbol('BONK')!.address;

describe('reconciliation: the sandbox market makers’ balances on chain against the swaps recorded', () => {
  let t: TestApp;
  let recon: Reconciliation;
  let trader: Principal;
  beforeAll(async () => {
    const clock = new ManualClock(new Date('2026-05-02T03:00:00.000Z'));
    // Its own database: the chain and the swaps are this file's alone.
    t = await createTestApp({ isolated: true, clock });
    recon = new Reconciliation(
      t.services.db,
      clock,
      [marketMakerSource(sandboxMarketMakers(t.services.solanaChains.chainFor('sandbox', 'devnet')))],
      RECONCILIATION_SETTINGS,
    );
    trader = {
      kind: 'api_key',
      credentialId: 'test',
      userId: (await seedTenant(t.services)).user.id,
      environment: 'sandbox',
      abilities: abilitiesOf('FULL_ACCESS'),
    };
    await t.services.sandboxFaucet.fund(trader, { network: 'devnet' });
  });
  afterAll(async () => {
    await t.close();
  });

  const swap = async (inputMint: string, outputMint: string, amount: string) => {
    const quote = await t.services.solanaExchange.quote(trader, { inputMint, outputMint, amount, network: 'devnet' });
    expect((await t.services.solanaExchange.swap(trader, { quoteId: quote.quoteId }, undefined)).status).toBe(
      'confirmed',
    );
  };
  // Test files of a worker share the embedded database: only this source's breaks are this file's.
  const openBreaks = async () =>
    (await recon.breaks({ open: true })).filter((b) => b.provider === 'solana-devnet-market-makers');
  const reconcile = () => recon.run({ environment: 'sandbox', date: DAY, trigger: 'manual' });

  it('a clean day: after one- and two-hop swaps every token the pools hold is what genesis and the swaps imply', async () => {
    await swap(SOL_MINT, USDC, '0.25');
    // BONK → SOL → USDT: SOL passes between two pools and nets out.
    await swap(BONK, USDT, '100000');
    await swap(USDC, USDT, '10');
    const run = await reconcile();
    expect(run.outcome).toBe('ok');
    expect(run.sources[0]).toMatchObject({ provider: 'solana-devnet-market-makers', breaks: 0, matched: 4 });
    expect(await openBreaks()).toEqual([]);
  });

  it('a swap recorded that the chain never ran is balance_differs on its input and output, with both figures; gone, it clears', async () => {
    const owner = (await t.services.solanaWallets.walletOf(trader)).address;
    const [ghost] = await t.services.db
      .insert(chainSends)
      .values({
        userId: trader.userId,
        environment: 'sandbox',
        family: 'solana',
        network: 'devnet',
        kind: 'swap',
        fromAddress: owner,
        toAddress: owner,
        asset: USDC,
        amountRaw: 5_000_000n,
        decimals: 6,
        outputAsset: USDT,
        outputAmountRaw: 4_900_000n,
        txHash: randomBytes(32).toString('hex'),
        wire: '',
        status: 'confirmed',
      })
      .returning();
    const run = await reconcile();
    expect(run.outcome).toBe('breaks');
    const open = await openBreaks();
    expect(open.map((b) => [b.kind, b.itemType, b.reference]).sort()).toEqual([
      ['balance_differs', 'market_maker_balance', `market-makers:${USDC}`],
      ['balance_differs', 'market_maker_balance', `market-makers:${USDT}`],
    ]);
    const usdc = open.find((b) => b.reference.endsWith(USDC))!;
    expect(BigInt(usdc.ourAmount!) - BigInt(usdc.theirAmount!)).toBe(5_000_000n);
    const usdt = open.find((b) => b.reference.endsWith(USDT))!;
    expect(BigInt(usdt.theirAmount!) - BigInt(usdt.ourAmount!)).toBe(4_900_000n);
    await readReconciliation(recon);
    expect(await registry.metrics()).toMatch(
      /gateway_reconciliation_breaks_open\{environment="sandbox",provider="solana-devnet-market-makers",kind="balance_differs"\} 2/,
    );

    await t.services.db.delete(chainSends).where(eq(chainSends.id, ghost!.id));
    // Another day's run: a balance is of the run, so it clears the earlier day's balance breaks too.
    const next = await recon.run({ environment: 'sandbox', date: '2026-05-02', trigger: 'manual' });
    expect(next.outcome).toBe('ok');
    expect(await openBreaks()).toEqual([]);
  });
});
