import { sql } from 'drizzle-orm';
import { decodeFunctionResult, encodeFunctionData, type Hex, hexToBytes } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outGivenInV2 } from '../../src/domain/chain/pool-math.js';
import { reservesOf } from '../../src/domain/evm/sandbox-pool-quotes.js';
import { ALLOWANCE_ABI, EVM_NATIVE_ASSET } from '../../src/domain/evm/exchange-contracts.js';
import { ROUTER_ADDRESS } from '../../src/domain/evm/sandbox-pools.js';
import { queryRows } from '../../src/db/client.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';

const ETH = 10n ** 18n;
const USD6 = 10n ** 6n;
const QUOTE = `quoteId swapMode fromToken { address symbol decimals } toToken { address symbol decimals }
  amounts { inputAmount outputAmount minOutputAmount inputAmountRaw outputAmountRaw } rates { rate reverseRate usdRate }
  fees { protocolFeePercent gasFee totalCost } route { hops dexes tokens } priceImpact usdValues { inputValue outputValue }
  slippageTolerance expiryTimestamp expiresIn network executable warnings rawQuote`;

/**
 * EVM swaps on the sandbox's Uniswap V2 pools over REST and GraphQL: quotes in the three directions
 * equal the pool formula on the reserves as they are; a swap moves the reserves as Uniswap V2 says,
 * leaves no allowance, and pays what the receipt shows; an expired quote and a moved price are
 * refused before anything is signed; a quote executes once.
 */
describe('EVM swaps on the sandbox pools', () => {
  let s: StartedTestApp;
  // The gateway's clock, moved on to let a quote expire.
  let ahead = 0;
  beforeAll(async () => {
    s = await startTestApp({ clock: { now: () => new Date(Date.now() + ahead) } });
  });
  afterAll(() => s.t.close());

  const network = 'arbitrum-one';
  const chain = () => s.t.services.evmChains.sandboxFor(network);
  const token = (symbol: string) => chain().tokenAddress(symbol);
  const wrapped = () => token('WETH');
  const get = async (key: string, url: string) => {
    const response = await s.t.app.inject({ url, headers: { 'x-api-key': key } });
    return { status: response.statusCode, body: response.json() };
  };
  const post = async (key: string, url: string, payload: object, idempotencyKey?: string) => {
    const response = await s.t.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': key, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      payload,
    });
    return { status: response.statusCode, body: response.json() };
  };
  const funded = async (native: bigint, usdt = 0n) => {
    const tenant = await seedTenant(s.t.services);
    const { address } = (await get(tenant.keys.READ_ONLY, '/api/v1/evm/address')).body.data;
    await chain().faucet(address, { native: true }, native);
    if (usdt > 0n) await chain().faucet(address, { token: 'USDT' }, usdt);
    return { tenant, address: address as Hex };
  };
  const allowance = async (owner: Hex, contract: string) => {
    const data = await chain().call({
      to: contract,
      data: hexToBytes(
        encodeFunctionData({ abi: ALLOWANCE_ABI, functionName: 'allowance', args: [owner, ROUTER_ADDRESS] }),
      ),
    });
    return decodeFunctionResult({
      abi: ALLOWANCE_ABI,
      functionName: 'allowance',
      data: `0x${Buffer.from(data).toString('hex')}` as Hex,
    });
  };

  it('quotes the three directions at the pool formula, on REST and GraphQL alike', async () => {
    const { tenant } = await funded(ETH);
    const key = tenant.keys.READ_ONLY;
    const toToken = await get(key, `/api/v1/evm-exchange/${network}/quote/native-to-token?outputToken=usdc&amount=0.5`);
    expect(toToken.status).toBe(200);
    const [wIn, usdcOut] = await reservesOf(chain(), wrapped(), token('USDC'));
    const q1 = toToken.body.data;
    expect(q1).toMatchObject({
      swapMode: 'ExactIn',
      fromToken: { address: EVM_NATIVE_ASSET, symbol: 'ETH', decimals: 18 },
      toToken: { symbol: 'USDC', decimals: 6 },
      amounts: { inputAmountRaw: `${ETH / 2n}` },
      route: { hops: 1, tokens: ['ETH', 'USDC'] },
      network,
      executable: true,
      expiresIn: 30,
    });
    expect(BigInt(q1.amounts.outputAmountRaw)).toBe(outGivenInV2(wIn, usdcOut, ETH / 2n).amountOut);
    // USDC/CNGN-less arbitrum: USDT → USDC has its own pool; 1,000 USDT → 996.006981 USDC at 1,000,000 each.
    const t2t = await graphql(
      s.t.app,
      key,
      `query($n: String!, $i: EvmSwapQuoteInput!) { evmSwapQuote(network: $n, input: $i) { ${QUOTE} } }`,
      {
        n: network,
        i: { direction: 'TOKEN_TO_TOKEN', inputToken: 'USDT', outputToken: token('USDC'), amount: '1000' },
      },
    );
    const q2 = t2t.body.data!.evmSwapQuote;
    const [usdtR, usdcR] = await reservesOf(chain(), token('USDT'), token('USDC'));
    expect(BigInt(q2.amounts.outputAmountRaw)).toBe(outGivenInV2(usdtR, usdcR, 1_000n * USD6).amountOut);
    expect(q2.route).toMatchObject({ hops: 1, tokens: ['USDT', 'USDC'] });
    expect(q2.executable).toBe(false);
    expect(q2.warnings.join(' ')).toMatch(/Insufficient USDT/);
    const toNative = await get(key, `/api/v1/evm-exchange/${network}/quote/token-to-native?inputToken=USDT&amount=300`);
    const [usdtW, wOut] = await reservesOf(chain(), token('USDT'), wrapped());
    expect(BigInt(toNative.body.data.amounts.outputAmountRaw)).toBe(outGivenInV2(usdtW, wOut, 300n * USD6).amountOut);
    expect(toNative.body.data.toToken).toMatchObject({ address: EVM_NATIVE_ASSET, symbol: 'ETH' });
    // Bad input names its field.
    const bad = await get(
      key,
      `/api/v1/evm-exchange/${network}/quote/token-to-token?inputToken=USDT&outputToken=DOGE&amount=1`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/outputToken/);
  });

  it('swaps token → native through an exact approval, moves the reserves as Uniswap V2 says, and leaves no allowance', async () => {
    const { tenant, address } = await funded(ETH, 500n * USD6);
    const quote = (
      await get(
        tenant.keys.READ_ONLY,
        `/api/v1/evm-exchange/${network}/quote/token-to-native?inputToken=usdt&amount=250`,
      )
    ).body.data;
    const [before0, before1] = await reservesOf(chain(), token('USDT'), wrapped());
    const ethBefore = await chain().nativeBalance(address);
    const swapped = await post(
      tenant.keys.TRANSACTIONS,
      `/api/v1/evm-exchange/${network}/swap`,
      { quoteId: quote.quoteId },
      'swap-1',
    );
    expect(swapped.status).toBe(201);
    const result = swapped.body.data;
    const paid = outGivenInV2(before0, before1, 250n * USD6).amountOut;
    expect(result).toMatchObject({ status: 'confirmed', inputAmount: '250', outputAmountRaw: `${paid}` });
    expect(result.legs.map((l: { kind: string; status: string }) => [l.kind, l.status])).toEqual([
      ['approve', 'confirmed'],
      ['swap', 'confirmed'],
    ]);
    expect(result.legs.map((l: { nonce: string }) => l.nonce)).toEqual(['0', '1']);
    expect(await reservesOf(chain(), token('USDT'), wrapped())).toEqual([before0 + 250n * USD6, before1 - paid]);
    expect(await allowance(address, token('USDT'))).toBe(0n);
    expect(await chain().tokenBalance(address, token('USDT'))).toBe(250n * USD6);
    // The wallet got the pools' output less the two legs' gas.
    const ethAfter = await chain().nativeBalance(address);
    expect(ethAfter - ethBefore).toBeLessThan(paid);
    expect(ethAfter - ethBefore).toBeGreaterThan(paid - ETH / 1000n);
    // The key replays the answer; the quote executes once.
    const again = await post(
      tenant.keys.TRANSACTIONS,
      `/api/v1/evm-exchange/${network}/swap`,
      { quoteId: quote.quoteId },
      'swap-1',
    );
    expect(again.body.data.hash).toBe(result.hash);
    const twice = await post(tenant.keys.TRANSACTIONS, `/api/v1/evm-exchange/${network}/swap`, {
      quoteId: quote.quoteId,
    });
    expect(twice.status).toBe(409);
  });

  it('swaps native → token over GraphQL with the minimum output enforced, and refuses a moved price unsigned', async () => {
    const { tenant, address } = await funded(3n * ETH);
    const ask = (amount: string, slippageBps = 50) =>
      graphql(
        s.t.app,
        tenant.keys.READ_ONLY,
        `query($n: String!, $i: EvmSwapQuoteInput!) { evmSwapQuote(network: $n, input: $i) { quoteId amounts { outputAmountRaw minOutputAmount } } }`,
        { n: network, i: { direction: 'NATIVE_TO_TOKEN', outputToken: 'USDC', amount, slippageBps } },
      ).then((r) => r.body.data!.evmSwapQuote);
    const swap = (quoteId: string) =>
      graphql(
        s.t.app,
        tenant.keys.TRANSACTIONS,
        `mutation($n: String!, $i: EvmSwapInput!) { swapEvmTokens(network: $n, input: $i) { status outputAmountRaw legs { kind nonce } } }`,
        { n: network, i: { quoteId } },
      );
    const tight = await ask('1', 10);
    // Someone else's trade moves the pool before this quote is used.
    const other = await funded(20n * ETH);
    const moving = await ask('1');
    const otherQuote = (
      await get(
        other.tenant.keys.READ_ONLY,
        `/api/v1/evm-exchange/${network}/quote/native-to-token?outputToken=USDC&amount=10`,
      )
    ).body.data;
    expect(
      (
        await post(other.tenant.keys.TRANSACTIONS, `/api/v1/evm-exchange/${network}/swap`, {
          quoteId: otherQuote.quoteId,
        })
      ).status,
    ).toBe(201);
    const nonceBefore = await chain().transactionCount(address);
    const refused = await swap(tight.quoteId);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('PRICE_MOVED');
    expect(await chain().transactionCount(address)).toBe(nonceBefore);
    void moving;
    const fresh = await ask('1');
    const [wR, uR] = await reservesOf(chain(), wrapped(), token('USDC'));
    const done = await swap(fresh.quoteId);
    expect(done.body.data!.swapEvmTokens).toMatchObject({
      status: 'confirmed',
      outputAmountRaw: `${outGivenInV2(wR, uR, ETH).amountOut}`,
      legs: [{ kind: 'swap', nonce: '0' }],
    });
    // The swap is told as its own event, with its output; the tokens coming back are no deposit.
    await s.t.services.evmIncoming.poll();
    await s.t.services.evmIncoming.poll();
    const told = await queryRows<{ type: string; data: Record<string, unknown> }>(
      s.t.services.db,
      sql`select type, data from events where user_id = ${tenant.user.id}::uuid and data->>'network' = ${network}
          and data->>'type' in ('CRYPTO_SWAP', 'CRYPTO_DEPOSIT') order by created_at`,
    );
    expect(told.filter((e) => e.data['type'] === 'CRYPTO_DEPOSIT').map((e) => e.data['token'])).toEqual([null]);
    expect(told.filter((e) => e.data['type'] === 'CRYPTO_SWAP').map((e) => [e.type, e.data['kind']])).toEqual([
      ['transaction.created', 'swap'],
      ['transaction.completed', 'swap'],
    ]);
    expect(
      told.find((e) => e.type === 'transaction.completed' && e.data['type'] === 'CRYPTO_SWAP')!.data,
    ).toMatchObject({
      quoteId: fresh.quoteId,
      outputToken: token('USDC'),
      outputAmountRaw: `${outGivenInV2(wR, uR, ETH).amountOut}`,
    });
  });

  it('refuses an expired quote before signing', async () => {
    const { tenant, address } = await funded(ETH, 10n * USD6);
    const quote = (
      await get(
        tenant.keys.READ_ONLY,
        `/api/v1/evm-exchange/${network}/quote/token-to-token?inputToken=USDT&outputToken=USDC&amount=5`,
      )
    ).body.data;
    ahead = 31_000;
    const refused = await post(tenant.keys.TRANSACTIONS, `/api/v1/evm-exchange/${network}/swap`, {
      quoteId: quote.quoteId,
    }).finally(() => {
      ahead = 0;
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/expired/);
    expect(await chain().transactionCount(address)).toBe(0n);
  });

  it('values one portfolio across naira, Solana and every EVM network, the totals the sum of the parts', async () => {
    const { tenant, address } = await funded(2n * ETH, 123_456_789n);
    await fund(s.t, tenant, 4_321.5);
    await chain().faucet(address, { token: 'USDC' }, 7n * USD6);
    const faucet = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/solana/sandbox/faucet',
      headers: { 'x-api-key': tenant.keys.TRANSACTIONS },
      payload: {},
    });
    expect(faucet.statusCode).toBe(201);
    const heightOfUnused = await s.t.services.evmChains.sandboxFor('scroll').height();
    const rest = await get(tenant.keys.READ_ONLY, '/api/v1/portfolio');
    expect(rest.status).toBe(200);
    const view = rest.body.data;
    const cents = (n: number) => Math.round(n * 100);
    const sum = (values: number[]) => values.reduce((a, b) => a + cents(b), 0);
    expect(cents(view.usdValue)).toBe(sum(view.parts.map((p: { usdValue: number }) => p.usdValue)));
    expect(cents(view.ngnValue)).toBe(sum(view.parts.map((p: { ngnValue: number }) => p.ngnValue)));
    for (const part of view.parts) {
      expect(cents(part.usdValue)).toBe(sum(part.holdings.map((h: { usdValue: number }) => h.usdValue)));
      expect(cents(part.ngnValue)).toBe(sum(part.holdings.map((h: { ngnValue: number }) => h.ngnValue)));
    }
    expect(view.parts.map((p: { family: string }) => p.family)).toEqual(['ngn', 'solana', ...Array(8).fill('evm')]);
    expect(view.parts[0].holdings[0]).toMatchObject({ symbol: 'NGN', amount: '4321.5', ngnValue: 4321.5 });
    expect(view.parts[1].holdings.length).toBeGreaterThan(0);
    const arbitrum = view.parts.find((p: { network: string }) => p.network === network);
    expect(arbitrum).toMatchObject({ touched: true, address });
    const eth = arbitrum.holdings.find((h: { symbol: string }) => h.symbol === 'ETH');
    expect(eth).toMatchObject({ amount: '2', priced: true, priceSource: `sandbox Uniswap V2 pools on ${network}` });
    expect(eth.priceAgeSeconds).toBeLessThan(60);
    expect(arbitrum.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')).toMatchObject({
      amount: '7',
      usdValue: 7,
      ngnValue: 7 * view.ngnPerUsd,
    });
    // A network never used is an empty part, and reading it did not create its chain.
    expect(view.parts.find((p: { network: string }) => p.network === 'scroll')).toMatchObject({
      touched: false,
      holdings: [],
      usdValue: 0,
    });
    expect(await s.t.services.evmChains.sandboxFor('scroll').height()).toBe(heightOfUnused);
    // GraphQL answers the same totals.
    const graph = await graphql(s.t.app, tenant.keys.READ_ONLY, '{ portfolio { usdValue ngnValue parts { family } } }');
    expect(graph.body.data!.portfolio).toMatchObject({ usdValue: view.usdValue, ngnValue: view.ngnValue });
  });
});
