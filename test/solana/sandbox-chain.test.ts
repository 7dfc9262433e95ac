import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { address } from '@solana/kit';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../src/db/schema.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { parseTokenAccount } from '../../src/domain/solana/litesvm-chain.js';
import { SANDBOX_POOLS, tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { reservesOf } from '../../src/domain/solana/sandbox-amm.js';
import { inGivenOut, outGivenIn } from '../../src/domain/chain/pool-math.js';
import { ManualClock } from '../../src/domain/clock.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { createServices } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import type { Services } from '../../src/services.js';

const USDC = tokenBySymbol('USDC')!.address;

describe('sandbox Solana chain (litesvm): faucet, balances, SPL and SOL transfers', () => {
  let services: Services;
  let alice: Principal;
  let bob: Principal;
  beforeAll(async () => {
    services = await createTestServices();
    const principal = async () => ({
      kind: 'api_key' as const,
      credentialId: 'test',
      userId: (await seedTenant(services)).user.id,
      environment: 'sandbox' as const,
      abilities: abilitiesOf('FULL_ACCESS'),
    });
    alice = await principal();
    bob = await principal();
    await services.sandboxFaucet.fund(alice, { network: 'devnet' });
  });
  afterAll(() => undefined);

  const tokenAccountAmount = (network: 'devnet', owner: string, mint: string) =>
    services.sandboxChains.read(network, (svm) => {
      const account = svm.getAccount(
        address(getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true).toBase58()),
      );
      return account.exists ? parseTokenAccount(account.data).amount : undefined;
    });

  it('funds a wallet from the faucet and shows its portfolio with USD values', async () => {
    const portfolio = await services.solanaPortfolio.portfolio(alice, 'devnet');
    expect(portfolio.sol.amount).toBe('2');
    const usdc = portfolio.tokens.find((t) => t.symbol === 'USDC')!;
    expect(usdc.amount).toBe('1000');
    expect(usdc.usdValue).toBe(1000);
    expect(portfolio.sol.usdValue).toBeCloseTo(300, 0);
    // Another network is another chain.
    expect((await services.solanaPortfolio.portfolio(alice, 'testnet')).sol.amount).toBe('0');
  });

  it('moves exactly the amount, creating the recipient token account when missing', async () => {
    const stranger = Keypair.generate().publicKey.toBase58();
    const before = await tokenAccountAmount('devnet', (await services.solanaWallets.walletOf(alice)).address, USDC);
    expect(await tokenAccountAmount('devnet', stranger, USDC)).toBeUndefined();
    const sent = await services.solanaTransfers.transferToken(
      alice,
      { to: stranger, tokenMintAddress: USDC, amount: '12.345678', network: 'devnet' },
      undefined,
    );
    expect(sent.status).toBe('confirmed');
    expect(await tokenAccountAmount('devnet', stranger, USDC)).toBe(12_345_678n);
    expect(await tokenAccountAmount('devnet', (await services.solanaWallets.walletOf(alice)).address, USDC)).toBe(
      before! - 12_345_678n,
    );
  });

  it('sends two identical transfers as two transactions (the sandbox blockhash never changes)', async () => {
    const to = Keypair.generate().publicKey.toBase58();
    const first = await services.solanaTransfers.transferSol(
      alice,
      { to, amount: '0.01', network: 'devnet' },
      undefined,
    );
    const second = await services.solanaTransfers.transferSol(
      alice,
      { to, amount: '0.01', network: 'devnet' },
      undefined,
    );
    expect(second.signature).not.toBe(first.signature);
    expect([first.status, second.status]).toEqual(['confirmed', 'confirmed']);
    expect(await services.sandboxChains.read('devnet', (svm) => svm.getBalance(address(to)))).toBe(20_000_000n);
  });

  it('refuses more than the balance, and moves nothing', async () => {
    const from = (await services.solanaWallets.walletOf(alice)).address;
    const before = await tokenAccountAmount('devnet', from, USDC);
    await expect(
      services.solanaTransfers.transferToken(
        alice,
        { to: Keypair.generate().publicKey.toBase58(), tokenMintAddress: USDC, amount: '5000', network: 'devnet' },
        undefined,
      ),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(await tokenAccountAmount('devnet', from, USDC)).toBe(before);
  });

  it('sends SOL, and tells the receiving custodial wallet with a transaction.completed event', async () => {
    const to = (await services.solanaWallets.walletOf(bob)).address;
    const sent = await services.solanaTransfers.transferSol(alice, { to, amount: '0.5', network: 'devnet' }, undefined);
    expect(sent.status).toBe('confirmed');
    expect((await services.solanaPortfolio.solBalance(bob, 'devnet')).amount).toBe('0.5');
    const arrivals = await services.db
      .select()
      .from(events)
      .where(and(eq(events.userId, bob.userId), eq(events.type, 'transaction.completed')));
    expect(arrivals).toHaveLength(1);
    expect(arrivals[0]!.data).toMatchObject({
      type: 'CRYPTO_DEPOSIT',
      amount: '0.5',
      signature: sent.signature,
      network: 'devnet',
      asset: 'SOL',
    });
  });
});

describe('sandbox Solana market: quotes from the pool math, swaps that move real tokens both ways', () => {
  let services: Services;
  let trader: Principal;
  const SOL_MINT = 'So11111111111111111111111111111111111111112';
  beforeAll(async () => {
    services = await createTestServices();
    trader = {
      kind: 'api_key',
      credentialId: 'test',
      userId: (await seedTenant(services)).user.id,
      environment: 'sandbox',
      abilities: abilitiesOf('FULL_ACCESS'),
    };
    await services.sandboxFaucet.fund(trader, { network: 'testnet' });
  });

  const pool = (name: string) => SANDBOX_POOLS.find((p) => p.name === name)!;
  const reserves = (name: string) => services.sandboxChains.read('testnet', (svm) => reservesOf(svm, pool(name)));

  it('quotes ExactIn and ExactOut exactly as the constant-product math says', async () => {
    const [sol, usdc] = await reserves('SOL/USDC');
    const exactIn = await services.solanaExchange.quote(trader, {
      inputMint: SOL_MINT,
      outputMint: USDC,
      amount: '1',
      network: 'testnet',
    });
    expect(BigInt(exactIn.amounts.outputAmountRaw)).toBe(outGivenIn(sol, usdc, 1_000_000_000n).amountOut);
    expect(exactIn.route).toMatchObject({ hops: 1, tokens: ['SOL', 'USDC'] });
    expect(exactIn.fees.protocolFeePercent).toBe('0.3');
    expect((BigInt(exactIn.amounts.outputAmountRaw) * 9950n) / 10000n).toBe(rawOf(exactIn.amounts.minOutputAmount, 6));

    const exactOut = await services.solanaExchange.quote(trader, {
      inputMint: USDC,
      outputMint: SOL_MINT,
      amount: '0.5',
      swapMode: 'ExactOut',
      network: 'testnet',
    });
    expect(BigInt(exactOut.amounts.inputAmountRaw)).toBe(inGivenOut(usdc, sol, 500_000_000n)!.amountIn);
    expect(exactOut.amounts.outputAmount).toBe('0.5');

    // Two hops when no pool joins the pair: BONK → SOL → USDT.
    const twoHops = await services.solanaExchange.quote(trader, {
      inputMint: tokenBySymbol('BONK')!.address,
      outputMint: tokenBySymbol('USDT')!.address,
      amount: '1000000',
      network: 'testnet',
    });
    expect(twoHops.route.tokens).toEqual(['BONK', 'SOL', 'USDT']);
    expect(twoHops.route.hops).toBe(2);
  });

  it('swaps: the user gives the input and gets the output, the pool the other way round, in one transaction', async () => {
    const owner = (await services.solanaWallets.walletOf(trader)).address;
    const [solBefore, usdcBefore] = await reserves('SOL/USDC');
    const userUsdcBefore = (await services.solanaPortfolio.tokenBalance(trader, USDC, 'testnet')).amountRaw;
    const quote = await services.solanaExchange.quote(trader, {
      inputMint: SOL_MINT,
      outputMint: USDC,
      amount: '0.25',
      network: 'testnet',
    });
    const swapped = await services.solanaExchange.swap(trader, { quoteId: quote.quoteId }, undefined);
    expect(swapped.status).toBe('confirmed');
    expect(swapped.txUrl).toBe(`/api/v1/solana/transactions/${swapped.signature}`);
    const [solAfter, usdcAfter] = await reserves('SOL/USDC');
    expect(solAfter - solBefore).toBe(250_000_000n);
    expect(usdcBefore - usdcAfter).toBe(BigInt(quote.amounts.outputAmountRaw));
    expect((await services.solanaPortfolio.tokenBalance(trader, USDC, 'testnet')).amountRaw - userUsdcBefore).toBe(
      BigInt(quote.amounts.outputAmountRaw),
    );
    void owner;
  });

  it('refuses a swap whose price moved beyond the slippage, and moves nothing', async () => {
    const quote = await services.solanaExchange.quote(trader, {
      inputMint: SOL_MINT,
      outputMint: USDC,
      amount: '0.1',
      slippageBps: 10,
      network: 'testnet',
    });
    // Someone else buys USDC with SOL first: the price of USDC in SOL rises.
    const whale = { ...trader, userId: (await seedTenant(services)).user.id };
    await services.sandboxFaucet.fund(whale, { network: 'testnet', asset: 'SOL', amount: '100' });
    await services.solanaExchange.swap(
      whale,
      { inputMint: SOL_MINT, outputMint: USDC, amount: '90', network: 'testnet' },
      undefined,
    );
    const before = await reserves('SOL/USDC');
    await expect(services.solanaExchange.swap(trader, { quoteId: quote.quoteId }, undefined)).rejects.toMatchObject({
      code: 'PRICE_MOVED',
    });
    expect(await reserves('SOL/USDC')).toEqual(before);
  });

  it('refuses an expired quote', async () => {
    const clock = new ManualClock(Date.now());
    const timed = createServices(services.config, services.db, clock, () => undefined, new RateLimiter(undefined));
    const quote = await timed.solanaExchange.quote(trader, {
      inputMint: SOL_MINT,
      outputMint: USDC,
      amount: '0.1',
      network: 'testnet',
    });
    expect(quote.expiresIn).toBe(30);
    clock.advance(30_001);
    await expect(timed.solanaExchange.swap(trader, { quoteId: quote.quoteId }, undefined)).rejects.toMatchObject({
      code: 'QUOTE_EXPIRED',
    });
  });

  it('keeps the chain across a restart: another process sees the same balances', async () => {
    const before = await services.solanaPortfolio.portfolio(trader, 'testnet');
    const restarted = createServices(
      services.config,
      services.db,
      services.clock,
      () => undefined,
      new RateLimiter(undefined),
    );
    const after = await restarted.solanaPortfolio.portfolio(trader, 'testnet');
    expect(after.sol.amountRaw).toBe(before.sol.amountRaw);
    expect(after.tokens.map((t) => [t.symbol, t.amountRaw])).toEqual(before.tokens.map((t) => [t.symbol, t.amountRaw]));
  });
});

function rawOf(decimal: string, decimals: number): bigint {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole! + fraction.padEnd(decimals, '0'));
}
