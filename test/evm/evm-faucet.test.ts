import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

/**
 * The sandbox EVM faucet a partner funds its users' wallets with: real transactions from the
 * chain's faucet key, mined before the answer, so the balances read right after show them.
 */
describe('the sandbox EVM faucet', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(() => s.t.close());

  const call = async (method: 'GET' | 'POST', key: string, url: string, payload?: object, idempotencyKey?: string) => {
    const response = await s.t.app.inject({
      method,
      url,
      headers: { 'x-api-key': key, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() };
  };

  it('sends the kit without an asset, and the portfolio shows it at once', async () => {
    const tenant = await seedTenant(s.t.services);
    const funded = await call('POST', tenant.keys.TRANSACTIONS, '/api/v1/evm/base/sandbox/faucet', {});
    expect(funded.status).toBe(201);
    expect(funded.body.data.network).toBe('base');
    expect(funded.body.data.funded.map((g: { symbol: string; amount: string }) => [g.symbol, g.amount])).toEqual([
      ['ETH', '1'],
      ['USDT', '1000'],
      ['USDC', '1000'],
      ['CNGN', '1000000'],
    ]);
    for (const grant of funded.body.data.funded) expect(grant.hash).toMatch(/^0x[0-9a-f]{64}$/);
    const portfolio = await call('GET', tenant.keys.READ_ONLY, '/api/v1/evm/base/portfolio');
    expect(portfolio.body.data.address).toBe(funded.body.data.address);
    expect(portfolio.body.data.native.amountRaw).toBe(String(10n ** 18n));
    const held = Object.fromEntries(
      portfolio.body.data.tokens.map((t: { symbol: string; amount: string }) => [t.symbol, t.amount]),
    );
    expect(held).toMatchObject({ USDT: '1000', USDC: '1000', CNGN: '1000000', WETH: '0' });
  });

  it('sends one asset by symbol in any case, and a keyed repeat replays the grant without sending again', async () => {
    const tenant = await seedTenant(s.t.services);
    const body = { asset: 'usdc', amount: '12.5' };
    const first = await call('POST', tenant.keys.TRANSACTIONS, '/api/v1/evm/polygon/sandbox/faucet', body, 'tap-1');
    const again = await call('POST', tenant.keys.TRANSACTIONS, '/api/v1/evm/polygon/sandbox/faucet', body, 'tap-1');
    expect(first.body.data.funded).toEqual([{ symbol: 'USDC', amount: '12.5', hash: expect.any(String) }]);
    expect(again.body.data).toEqual(first.body.data);
    const balance = await call('GET', tenant.keys.READ_ONLY, '/api/v1/evm/polygon/tokens/USDC/balance');
    expect(balance.body.data).toMatchObject({ amount: '12.5', amountRaw: '12500000' });
    const native = await call('POST', tenant.keys.TRANSACTIONS, '/api/v1/evm/polygon/sandbox/faucet', {
      asset: 'POL',
      amount: 2,
    });
    expect(native.body.data.funded[0]).toMatchObject({ symbol: 'POL', amount: '2' });
  });

  it('answers over GraphQL with the same grant', async () => {
    const tenant = await seedTenant(s.t.services);
    const { body } = await graphql(
      s.t.app,
      tenant.keys.TRANSACTIONS,
      'mutation { sandboxEvmFaucet(network: "scroll", input: { asset: "ETH", amount: "0.25" }) { address network funded { symbol amount } } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.sandboxEvmFaucet).toMatchObject({
      network: 'scroll',
      funded: [{ symbol: 'ETH', amount: '0.25' }],
    });
  });

  it('refuses naming the field: an asset the network lacks, no amount, over the cap, a bad network; 403 and 404', async () => {
    const tenant = await seedTenant(s.t.services);
    const url = '/api/v1/evm/scroll/sandbox/faucet';
    const lacking = await call('POST', tenant.keys.TRANSACTIONS, url, { asset: 'CNGN', amount: '1' });
    expect(lacking.status).toBe(400);
    expect(lacking.body.message).toContain('asset must be one of ETH, USDT, USDC, WETH on scroll.');
    const noAmount = await call('POST', tenant.keys.TRANSACTIONS, url, { asset: 'USDT' });
    expect(noAmount.status).toBe(400);
    expect(noAmount.body.message).toContain('amount is required with asset.');
    const tooMuch = await call('POST', tenant.keys.TRANSACTIONS, url, {
      asset: 'ETH',
      amount: '100.000000000000000001',
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.message).toContain('The faucet gives at most 100 ETH at a time.');
    const tooFine = await call('POST', tenant.keys.TRANSACTIONS, url, { asset: 'USDT', amount: '0.0000001' });
    expect(tooFine.status).toBe(400);
    const network = await call('POST', tenant.keys.TRANSACTIONS, '/api/v1/evm/solana/sandbox/faucet', {});
    expect(network.status).toBe(400);
    expect(JSON.stringify(network.body)).toContain('network');
    const readOnly = await call('POST', tenant.keys.READ_ONLY, url, {});
    expect(readOnly.status).toBe(403);
    const production = await call('POST', tenant.productionKey, url, {});
    expect(production.status).toBe(404);
    // Nothing was sent by the refusals.
    const portfolio = await call('GET', tenant.keys.READ_ONLY, '/api/v1/evm/scroll/portfolio');
    expect(portfolio.body.data.native.amountRaw).toBe('0');
  });
});
