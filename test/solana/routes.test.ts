import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_POOLS, SOL_MINT, tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { reservesOf } from '../../src/domain/solana/sandbox-amm.js';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const USDC = tokenBySymbol('USDC')!.address;
const USDT = tokenBySymbol('USDT')!.address;

describe('Solana REST v1 and GraphQL (sandbox)', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp());
    const funded = await call('POST', '/api/v1/solana/sandbox/faucet', {});
    expect(funded.statusCode).toBe(201);
    // Funded without a network named: the answer says which.
    expect(funded.json().data.network).toBe('mainnet-beta');
  });
  afterAll(() => t.close());

  const call = (
    method: 'GET' | 'POST',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
    key = tenant.keys.FULL_ACCESS,
  ) => t.app.inject({ method, url, payload: payload as never, headers: { 'x-api-key': key, ...headers } });

  it('reads the balance, a token balance, the portfolio, and the wallet beside the NGN wallet', async () => {
    const sol = (await call('GET', '/api/v1/solana/balance')).json().data;
    expect(sol).toMatchObject({ symbol: 'SOL', amount: '2', amountRaw: '2000000000', decimals: 9 });
    const usdc = (await call('GET', `/api/v1/solana/token-balance?mint=${USDC}`)).json().data;
    expect(usdc).toMatchObject({ symbol: 'USDC', amount: '1000', usdValue: 1000 });
    const portfolio = (await call('GET', '/api/v1/solana/portfolio?network=mainnet-beta')).json().data;
    expect(portfolio.tokens.map((x: { symbol: string }) => x.symbol)).toEqual(['BONK', 'USDC', 'USDT']);
    expect(portfolio.totalUsdValue).toBeGreaterThan(2000);
    const both = (await call('GET', '/api/v1/wallet/portfolio')).json().data;
    expect(both.ngn.currency).toBe('NGN');
    expect(both.solana.address).toBe(portfolio.address);
    const graph = await graphql(
      t.app,
      tenant.keys.READ_ONLY,
      '{ solanaPortfolio { sol { amount } tokens { symbol amountRaw } } walletPortfolio { ngn { availableKobo } } }',
    );
    expect(graph.body.data!.solanaPortfolio.sol.amount).toBe('2');
  });

  it('transfers a token with the seed body; a repeat with the same Idempotency-Key returns the same signature', async () => {
    const to = Keypair.generate().publicKey.toBase58();
    const body = { to, tokenMintAddress: USDC, amount: '1.5', network: 'mainnet-beta' };
    const first = await call('POST', '/api/v1/solana/transfer-token', body, { 'idempotency-key': 'sol-transfer-1' });
    expect(first.statusCode).toBe(201);
    const data = first.json().data;
    expect(data.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(data.status).toBe('confirmed');
    const again = await call('POST', '/api/v1/solana/transfer-token', body, { 'idempotency-key': 'sol-transfer-1' });
    expect(again.json().data.signature).toBe(data.signature);
    const listed = (await call('GET', '/api/v1/solana/transactions')).json().data;
    expect(listed.filter((x: { signature: string }) => x.signature === data.signature)).toHaveLength(1);
    expect((await call('GET', `/api/v1/solana/transactions/${data.signature}`)).json().data.amount).toBe('1.5');
    // Another user's transaction reads as missing.
    const other = await startTestAppTenant();
    expect((await call('GET', `/api/v1/solana/transactions/${data.signature}`, undefined, {}, other)).statusCode).toBe(
      404,
    );
  });

  async function startTestAppTenant() {
    const { seedTenant } = await import('../helpers/app.js');
    return (await seedTenant(t.services)).keys.FULL_ACCESS;
  }

  it('names the bad field: address, network, decimals, and says when the balance is short', async () => {
    const to = Keypair.generate().publicKey.toBase58();
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ to: 'not-an-address', tokenMintAddress: USDC, amount: '1' }, 400, /to/],
      [{ to, tokenMintAddress: USDC, amount: '1', network: 'localnet' }, 400, /network/],
      [{ to, tokenMintAddress: USDC, amount: '1.1234567' }, 400, /amount has 7 decimal places; at most 6 are allowed/],
      [{ to, tokenMintAddress: to, amount: '1' }, 400, /tokenMintAddress is not a token mint/],
      [{ to, tokenMintAddress: USDC, amount: '0' }, 400, /amount/],
    ];
    for (const [body, status, message] of cases) {
      const response = await call('POST', '/api/v1/solana/transfer-token', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(status);
      expect(response.json().message, JSON.stringify(body)).toMatch(message);
    }
    const short = await call('POST', '/api/v1/solana/transfer-token', { to, tokenMintAddress: USDT, amount: '5000' });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({
      errorCode: 'INSUFFICIENT_FUNDS',
      message: 'Insufficient token balance on mainnet-beta: 1000 available, 5000 asked.',
    });
    // Funded on mainnet-beta only: a devnet send is refused naming devnet, where nothing was funded.
    const devnet = await call('POST', '/api/v1/solana/transfer-token', {
      to,
      tokenMintAddress: USDT,
      amount: '1',
      network: 'devnet',
    });
    expect(devnet.json()).toMatchObject({
      errorCode: 'INSUFFICIENT_FUNDS',
      message: 'Insufficient token balance on devnet: 0 available, 1 asked.',
    });
    const noSol = await call('POST', '/api/v1/solana/transfer-sol', { to, amount: '50' });
    expect(noSol.json()).toMatchObject({ statusCode: 400, errorCode: 'INSUFFICIENT_FUNDS' });
  });

  it('quotes token-to-sol, sol-to-token and token-to-token with every field of the seed', async () => {
    for (const url of [
      `/api/v1/solana-exchange/quote/token-to-sol?inputMint=${USDC}&amount=10`,
      `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${USDT}&amount=0.1&slippageBps=100`,
      `/api/v1/solana-exchange/quote/token-to-token?inputMint=${USDC}&outputMint=${USDT}&amount=5&swapMode=ExactOut`,
    ]) {
      const response = await call('GET', url, undefined, {
        'x-api-key': '',
        authorization: `Bearer ${tenant.keys.READ_ONLY}`,
      });
      expect(response.statusCode, url).toBe(200);
      const quote = response.json().data;
      for (const field of [
        'quoteId',
        'swapMode',
        'fromToken',
        'toToken',
        'amounts',
        'rates',
        'fees',
        'route',
        'priceImpact',
        'usdValues',
        'slippageTolerance',
        'expiryTimestamp',
        'expiresIn',
        'estimatedSwapTime',
        'network',
        'executable',
        'warnings',
        'rawQuote',
      ]) {
        expect(quote, `${url} ${field}`).toHaveProperty(field);
      }
      expect(Object.keys(quote.fees).sort()).toEqual([
        'gasFee',
        'platformFeePercent',
        'protocolFeeAmount',
        'protocolFeePercent',
        'totalCost',
        'totalFeeAmount',
        'totalFeePercent',
      ]);
      expect(quote.route.efficiencyScore).toBeGreaterThanOrEqual(1);
      // The seed's logoUri is an optional string: the sandbox tokens have no logo, so it is absent, not null.
      for (const token of [quote.fromToken, quote.toToken])
        expect(Object.keys(token).sort(), url).toEqual(['address', 'decimals', 'name', 'symbol']);
    }
    const refused = await call(
      'GET',
      `/api/v1/solana-exchange/quote/token-to-token?inputMint=${USDC}&outputMint=${USDC}&amount=1`,
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/outputMint/);
  });

  it('swaps SOL into a token on swap-token-to-sol, and by quote id', async () => {
    const swapped = await call('POST', '/api/v1/solana-exchange/swap-token-to-sol', {
      outputMint: USDC,
      amount: 0.1,
      slippageBps: 100,
    });
    expect(swapped.statusCode).toBe(201);
    expect(swapped.json().data).toMatchObject({
      status: 'confirmed',
      // The sandbox chain is on no public explorer: the link is the gateway's own transaction path.
      txUrl: expect.stringMatching(/^\/api\/v1\/solana\/transactions\/\w+$/),
    });
    const followed = await call('GET', swapped.json().data.txUrl);
    expect(followed.statusCode).toBe(200);
    expect(followed.json().data).toMatchObject({ signature: swapped.json().data.signature, kind: 'swap' });
    const quote = (
      await call(
        'GET',
        `/api/v1/solana-exchange/quote/token-to-token?inputMint=${USDC}&outputMint=${USDT}&amount=3&network=mainnet-beta`,
      )
    ).json().data;
    const byQuote = await call('POST', '/api/v1/solana-exchange/swap', { quoteId: quote.quoteId });
    expect(byQuote.statusCode).toBe(201);
    expect(byQuote.json().data).toMatchObject({ quoteId: quote.quoteId, inputAmount: '3' });
    // The swap priced again at execution: what came out, in USDT units, at least the quote's minimum.
    expect(Number(byQuote.json().data.outputAmount)).toBeGreaterThanOrEqual(Number(quote.amounts.minOutputAmount));
    expect(byQuote.json().data.outputAmount).toMatch(/^\d+(\.\d{1,6})?$/);
    const unknown = await call('POST', '/api/v1/solana-exchange/swap', {
      quoteId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(404);
    const viaGraph = await graphql(
      t.app,
      tenant.keys.TRANSACTIONS,
      `mutation { swapTokens(input: { inputMint: "${USDT}", outputMint: "${SOL_MINT}", amount: "1" }) { signature status } }`,
    );
    expect(viaGraph.body.data!.swapTokens.status).toBe('confirmed');
    const readOnly = await call(
      'POST',
      '/api/v1/solana-exchange/swap-token-to-token',
      { inputMint: USDC, outputMint: USDT, amount: '1' },
      {},
      tenant.keys.READ_ONLY,
    );
    expect(readOnly.statusCode).toBe(403);
  });

  it('swaps token to token over REST, and serves every Solana field over GraphQL', async () => {
    const swapped = await call('POST', '/api/v1/solana-exchange/swap-token-to-token', {
      inputMint: USDC,
      outputMint: USDT,
      amount: '2',
      slippageBps: 100,
    });
    expect(swapped.statusCode).toBe(201);
    expect(swapped.json().data.status).toBe('confirmed');

    const key = tenant.keys.FULL_ACCESS;
    const to = Keypair.generate().publicKey.toBase58();
    const faucet = await graphql(
      t.app,
      key,
      'mutation { sandboxSolanaFaucet(input: { network: "devnet", asset: "USDC", amount: "5" }) { address network funded { symbol amount } } }',
    );
    expect(faucet.body.data!.sandboxSolanaFaucet).toMatchObject({
      network: 'devnet',
      funded: [{ symbol: 'USDC', amount: '5' }],
    });
    await graphql(
      t.app,
      key,
      'mutation { sandboxSolanaFaucet(input: { network: "devnet", asset: "SOL", amount: "1" }) { address } }',
    );
    const reads = await graphql(
      t.app,
      key,
      `{
      solanaWallet { address }
      solanaBalance(network: "devnet") { symbol amount amountRaw usdValue }
      solanaTokenBalance(mint: "${USDC}", network: "devnet") { symbol amount decimals }
      swapQuote(input: { inputMint: "${USDC}", outputMint: "${SOL_MINT}", amount: "1", network: "devnet" }) {
        quoteId swapMode fromToken { symbol } toToken { symbol } amounts { inputAmount outputAmount minOutputAmount inputAmountRaw outputAmountRaw }
        rates { rate reverseRate usdRate } fees { protocolFeePercent protocolFeeAmount platformFeePercent totalFeePercent totalFeeAmount gasFee totalCost }
        route { hops dexes tokens efficiencyScore } priceImpact usdValues { inputValue outputValue netValue } slippageTolerance expiryTimestamp expiresIn
        estimatedSwapTime network executable warnings rawQuote
      }
    }`,
    );
    expect(reads.body.errors).toBeUndefined();
    expect(reads.body.data!.solanaBalance).toMatchObject({ symbol: 'SOL', amount: '1' });
    expect(reads.body.data!.solanaTokenBalance).toMatchObject({ amount: '5', decimals: 6 });
    expect(reads.body.data!.swapQuote).toMatchObject({
      network: 'devnet',
      executable: true,
      route: { tokens: ['USDC', 'SOL'] },
    });

    const sent = await graphql(
      t.app,
      key,
      `mutation { transferSolanaToken(input: { to: "${to}", tokenMintAddress: "${USDC}", amount: "2.5", network: "devnet" }) { signature status amount amountRaw mint txUrl } }`,
    );
    expect(sent.body.data!.transferSolanaToken).toMatchObject({
      status: 'confirmed',
      amount: '2.5',
      amountRaw: '2500000',
      mint: USDC,
    });
    const sol = await graphql(
      t.app,
      key,
      `mutation { transferSol(input: { to: "${to}", amount: "0.25", network: "devnet" }) { signature status kind } }`,
    );
    expect(sol.body.data!.transferSol).toMatchObject({ status: 'confirmed', kind: 'sol' });
    const lookup = await graphql(
      t.app,
      key,
      `{ solanaTransfer(signature: "${sol.body.data!.transferSol.signature}") { to amount network } solanaTransfers(first: 2) { signature } }`,
    );
    expect(lookup.body.data!.solanaTransfer).toEqual({ to, amount: '0.25', network: 'devnet' });
    expect(lookup.body.data!.solanaTransfers.map((x: { signature: string }) => x.signature)).toContain(
      sol.body.data!.transferSol.signature,
    );
    const bad = await graphql(
      t.app,
      key,
      `mutation { transferSol(input: { to: "${to}", amount: "1.0000000001" }) { signature } }`,
    );
    expect(bad.body.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'amount' });
  });

  it('swaps once per Idempotency-Key: a repeat answers the first swap and moves nothing more', async () => {
    const pool = SANDBOX_POOLS.find((p) => p.name === 'USDC/USDT')!;
    const reserves = () => t.services.sandboxChains.read('mainnet-beta', (svm) => reservesOf(svm, pool));
    const before = await reserves();
    const body = { inputMint: USDC, outputMint: USDT, amount: '4', slippageBps: 100 };
    const first = await call('POST', '/api/v1/solana-exchange/swap-token-to-token', body, {
      'idempotency-key': 'swap-once',
    });
    expect(first.statusCode).toBe(201);
    const afterFirst = await reserves();
    expect(afterFirst[0] - before[0]).toBe(4_000_000n);
    const repeats = await Promise.all(
      [0, 1, 2].map(() =>
        call('POST', '/api/v1/solana-exchange/swap-token-to-token', body, { 'idempotency-key': 'swap-once' }),
      ),
    );
    for (const repeat of repeats) expect(repeat.json().data.signature).toBe(first.json().data.signature);
    expect(await reserves()).toEqual(afterFirst);
    const other = await call(
      'POST',
      '/api/v1/solana-exchange/swap-token-to-token',
      { ...body, amount: '5' },
      { 'idempotency-key': 'swap-once' },
    );
    expect(other.statusCode).toBe(422);
  });

  it('keeps the faucet to sandbox', async () => {
    const production = await call('POST', '/api/v1/solana/sandbox/faucet', {}, {}, tenant.productionKey);
    expect([404, 503]).toContain(production.statusCode);
  });
});
