import { randomBytes } from 'node:crypto';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { address } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainSends } from '../../src/db/chain-schema.js';
import { JupiterProvider } from '../../src/domain/solana/jupiter-provider.js';
import { parseTokenAccount } from '../../src/domain/solana/litesvm-chain.js';
import { SOL_MINT } from '../../src/domain/solana/sandbox-world.js';
import { FakeJupiter } from '../fakes/jupiter.js';
import { FakeSolanaRpc } from '../fakes/solana-rpc.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

describe('production swaps through the Jupiter adapter (local fakes of Jupiter and Solana RPC)', () => {
  const rpc = new FakeSolanaRpc();
  let jupiter: FakeJupiter;
  let t: TestApp;
  let tenant: Tenant;
  let wallet: PublicKey;
  let token: ReturnType<FakeSolanaRpc['createToken']>;

  beforeAll(async () => {
    await rpc.start();
    token = rpc.createToken('JUPT', 6);
    jupiter = await new FakeJupiter(rpc, token).start();
    ({ t, tenant } = await startTestApp({
      isolated: true,
      config: {
        SOLANA_RPC_URL_MAINNET_BETA: rpc.url,
        SOLANA_MASTER_KEYS_PRODUCTION: `1:${randomBytes(32).toString('base64')}`,
        SOLANA_CONFIRM_WAIT_MS: 1_000,
        JUPITER_BASE_URL: `${jupiter.url}/swap/v1`,
        JUPITER_PRICE_URL: `${jupiter.url}/price/v3`,
      },
    }));
    wallet = new PublicKey((await call('GET', '/api/v1/solana/address')).json().data.address);
    rpc.airdrop(wallet, 5n * BigInt(LAMPORTS_PER_SOL));
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([jupiter.stop(), rpc.stop()]);
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    t.app.inject({ method, url, payload: payload as never, headers: { 'x-api-key': tenant.productionKey } });
  const tokens = () => {
    const account = rpc.svm.getAccount(
      address(getAssociatedTokenAddressSync(new PublicKey(token.address), wallet, true).toBase58()),
    );
    return account.exists ? parseTokenAccount(account.data).amount : 0n;
  };

  it("maps Jupiter's quote onto the seed quote and keeps it verbatim as rawQuote", async () => {
    const response = await call(
      'GET',
      `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${token.address}&amount=1&slippageBps=100`,
    );
    expect(response.statusCode).toBe(200);
    const quote = response.json().data;
    const raw = jupiter.requests.filter((r) => r.path === '/swap/v1/quote').at(-1)!;
    expect(raw).toBeDefined();
    expect(quote.rawQuote.inAmount).toBe('1000000000');
    expect(quote.amounts.inputAmountRaw).toBe('1000000000');
    expect(quote.amounts.outputAmountRaw).toBe(quote.rawQuote.outAmount);
    expect(BigInt(quote.rawQuote.otherAmountThreshold)).toBe((BigInt(quote.rawQuote.outAmount) * 9900n) / 10000n);
    expect(quote.route).toMatchObject({ hops: 1, dexes: ['Fake AMM'] });
    expect(quote.usdValues.inputValue).toBe(150);
    expect(quote.toToken).toMatchObject({ address: token.address, decimals: 6 });
  });

  it("swaps: re-quotes, simulates Jupiter's transaction, signs it and sends it", async () => {
    const before = tokens();
    const swapped = await call('POST', '/api/v1/solana-exchange/swap-sol-to-token', {
      outputMint: token.address,
      amount: '0.5',
      slippageBps: 100,
    });
    expect(swapped.statusCode).toBe(201);
    const result = swapped.json().data;
    expect(result.status).toBe('confirmed');
    expect(result.txUrl).toBe(`https://explorer.solana.com/tx/${result.signature}`);
    const swapCall = jupiter.requests.filter((r) => r.path === '/swap/v1/swap').at(-1)!;
    expect(swapCall.body.userPublicKey).toBe(wallet.toBase58());
    expect(tokens() - before).toBe(BigInt(swapCall.body.quoteResponse.outAmount));
  });

  it("holds in SOL what Jupiter's transaction can cost: every signature's fee and the token account it creates", async () => {
    const ata = getAssociatedTokenAddressSync(new PublicKey(token.address), wallet, true).toBase58();
    const had = rpc.svm.getAccount(address(ata)).exists;
    const lamports = () => rpc.svm.getBalance(address(wallet.toBase58()))!;
    const before = lamports();
    const swapped = await call('POST', '/api/v1/solana-exchange/swap-sol-to-token', {
      outputMint: token.address,
      amount: '0.25',
      slippageBps: 100,
    });
    expect(swapped.statusCode).toBe(201);
    const [row] = await t.services.db
      .select()
      .from(chainSends)
      .where(eq(chainSends.txHash, swapped.json().data.signature));
    const rent = await t.services.solanaChains.productionChain('mainnet-beta').rentExempt(165);
    // The wallet's signature and the pool's (the fake signs as Jupiter's pools do), and the ATA's rent.
    expect(row!.feeRaw).toBe(2n * 5_000n + rent);
    // The cap covers what the chain took besides the amount: exactly, when the account was new.
    const spentBesides = before - lamports() - row!.amountRaw;
    expect(spentBesides).toBe(had ? 2n * 5_000n : row!.feeRaw);
  });

  it('refuses to sign a transaction that takes more than the quote allows', async () => {
    jupiter.tamper = true;
    const sends = rpc.sent.length;
    const before = rpc.svm.getBalance(address(wallet.toBase58()));
    try {
      const refused = await call('POST', '/api/v1/solana-exchange/swap-sol-to-token', {
        outputMint: token.address,
        amount: '0.1',
      });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().message).toMatch(/not signed/);
    } finally {
      jupiter.tamper = false;
    }
    expect(rpc.sent.length).toBe(sends);
    expect(rpc.svm.getBalance(address(wallet.toBase58()))).toBe(before);
  });

  it('refuses a swap whose price moved beyond the slippage since the quote', async () => {
    const quote = (
      await call(
        'GET',
        `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${token.address}&amount=0.2&slippageBps=10`,
      )
    ).json().data;
    jupiter.moveMarket(100n * BigInt(LAMPORTS_PER_SOL));
    const before = tokens();
    const moved = await call('POST', '/api/v1/solana-exchange/swap', { quoteId: quote.quoteId });
    expect(moved.statusCode).toBe(409);
    expect(moved.json()).toMatchObject({ errorCode: 'PRICE_MOVED' });
    expect(tokens()).toBe(before);
  });

  it("passes Jupiter's 400s on as 400s, and routes mainnet only", async () => {
    const untradable = await call(
      'GET',
      `/api/v1/solana-exchange/quote/token-to-token?inputMint=${token.address}&outputMint=${new PublicKey(randomBytes(32)).toBase58()}&amount=1`,
    );
    expect(untradable.statusCode).toBe(400);
    const devnet = await call(
      'GET',
      `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${token.address}&amount=1&network=devnet`,
    );
    expect(devnet.statusCode).toBe(503);
  });

  it('waits out one 429 within its bound, and answers 503 with the wait when Jupiter keeps refusing', async () => {
    const provider = new JupiterProvider({
      baseUrl: `${jupiter.url}/swap/v1`,
      priceUrl: `${jupiter.url}/price/v3`,
      maxRateLimitWaitMs: 2_000,
    });
    const request = {
      inputAsset: SOL_MINT,
      outputAsset: token.address,
      amountRaw: 1_000_000n,
      swapMode: 'ExactIn' as const,
      slippageBps: 50,
    };
    jupiter.rateLimitNext = 1;
    jupiter.rateLimitResetSeconds = undefined;
    const quote = await provider.quote('mainnet-beta', request);
    expect(quote.outAmountRaw).toBeGreaterThan(0n);
    jupiter.rateLimitNext = 2;
    jupiter.rateLimitResetSeconds = Math.ceil(Date.now() / 1000) + 60;
    await expect(provider.quote('mainnet-beta', request)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      retryAfter: expect.any(Number),
    });
    // Over REST: a 503 that passes Jupiter's wait on as Retry-After.
    jupiter.rateLimitNext = 2;
    const limited = await call(
      'GET',
      `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${token.address}&amount=1`,
    );
    expect(limited.statusCode).toBe(503);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(30);
    expect(limited.json().message).toMatch(/rate limiting/);
    jupiter.rateLimitNext = 0;
    jupiter.rateLimitResetSeconds = undefined;
    const prices = await provider.usdPrices('mainnet-beta', [SOL_MINT, token.address, 'unknown']);
    expect(prices.get(SOL_MINT)).toBe(150);
    expect(prices.has('unknown')).toBe(false);
  });
});
