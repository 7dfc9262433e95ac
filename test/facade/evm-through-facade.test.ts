import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type StartedTestApp, startTestApp, type TestApp } from '../helpers/app.js';
import { facadeOnSpecUpstream } from '../helpers/facade-on-spec-upstream.js';

const ETH = 10n ** 18n;
const USDC = 10n ** 6n;
const BALANCE = 'network address symbol token decimals amount amountRaw';
const TRANSFER = `id nodeId hash status network chainId kind from to asset token amount amountRaw nonce maxFee
  maxFeeRaw replaces error txUrl createdAt`;
/** Another wallet's address (no key of this gateway's): where the sends go. */
const RECIPIENT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

/**
 * The EVM wallet through a facade in front of this gateway in service mode: each of the operations
 * the spec names (and the address), over REST and GraphQL, answers as the upstream itself does; a
 * keyed send is sent once; with `UPSTREAM_ROUTES=spec` the graph has none of them.
 */
describe('the EVM wallet through a facade in front of this gateway in service mode', () => {
  let service: StartedTestApp;
  let facade: TestApp;
  let specFacade: TestApp;
  let address: string;

  beforeAll(async () => {
    service = await startTestApp({ listen: true });
    [facade, specFacade] = await Promise.all([
      createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: service.baseUrl } }),
      createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: service.baseUrl, UPSTREAM_ROUTES: 'spec' } }),
    ]);
    // The wallet, funded on the upstream's sandbox chain.
    address = (await graphql(service.t, '{ evmWallet { address } }')).body.data!.evmWallet.address;
    const base = service.t.services.evmChains.sandboxFor('base');
    await base.faucet(address, { native: true }, 2n * ETH);
    await base.faucet(address, { token: 'USDC' }, 500n * USDC);
  });

  afterAll(async () => {
    await Promise.all([facade?.close(), specFacade?.close()]);
    await service?.t.close();
  });

  const key = () => service.tenant.keys.FULL_ACCESS;
  async function graphql(app: TestApp, query: string, idempotencyKey?: string) {
    const response = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        'content-type': 'application/json',
        'x-api-key': key(),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      payload: JSON.stringify({ query }),
    });
    return { status: response.statusCode, body: response.json() };
  }
  const rest = async (app: TestApp, method: 'GET' | 'POST', url: string, payload?: object, idempotencyKey?: string) => {
    const response = await app.app.inject({
      method,
      url,
      headers: { 'x-api-key': key(), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() };
  };

  it.each([
    '/api/v1/evm/address',
    '/api/v1/evm/networks',
    '/api/v1/evm/base/balance',
    '/api/v1/evm/base/tokens/usdc/balance',
    '/api/v1/evm/base/portfolio',
  ])('answers REST GET %s as the upstream does', async (url) => {
    const direct = await rest(service.t, 'GET', url);
    expect(direct.status).toBe(200);
    expect(await rest(facade, 'GET', url)).toEqual(direct);
  });

  it('answers the EVM reads on GraphQL as the upstream does, its funded balances included', async () => {
    for (const query of [
      '{ evmWallet { address } }',
      `{ evmNetworks { id chainId name native { symbol name decimals } explorer dataFee
          tokens { address symbol name decimals logoUri wrapsNative } } }`,
      `{ evmBalance(network: "base") { ${BALANCE} } }`,
      `{ evmTokenBalance(network: "base", token: "USDC") { ${BALANCE} } }`,
      `{ evmPortfolio(network: "base") { address network chainId native { ${BALANCE} } tokens { ${BALANCE} } } }`,
      // A network never used upstream counts as empty.
      `{ evmPortfolio(network: "scroll") { address native { amount } tokens { symbol amountRaw } } }`,
    ]) {
      const direct = await graphql(service.t, query);
      expect(direct.body.errors, query).toBeUndefined();
      expect((await graphql(facade, query)).body, query).toEqual(direct.body);
    }
    // Refusals: the same code and the same field named, in the facade's own words. The network is
    // checked by the facade (it names the path); which tokens a network has, by the upstream.
    for (const [query, field] of [
      ['{ evmBalance(network: "solana") { amount } }', 'network'],
      ['{ evmTokenBalance(network: "base", token: "DOGE") { amount } }', 'token'],
      ['{ evmTokenBalance(network: "base", token: "../../user/me") { amount } }', 'token'],
    ]) {
      const direct = await graphql(service.t, query!);
      const through = await graphql(facade, query!);
      expect(direct.body.errors![0]!.extensions, query).toMatchObject({ code: 'BAD_USER_INPUT', field });
      expect(through.body.errors![0]!.extensions, query).toMatchObject({
        code: direct.body.errors![0]!.extensions.code,
        field: direct.body.errors![0]!.extensions.field,
      });
      expect(through.body.errors![0]!.path, query).toEqual(direct.body.errors![0]!.path);
    }
    const portfolio = (
      await graphql(facade, '{ evmPortfolio(network: "base") { native { amount } tokens { symbol amount } } }')
    ).body.data!.evmPortfolio as { native: { amount: string }; tokens: Array<{ symbol: string; amount: string }> };
    expect(portfolio.native.amount).toBe('2');
    expect(portfolio.tokens.find((t) => t.symbol === 'USDC')!.amount).toBe('500');
  });

  it('sends the native coin once per Idempotency-Key on GraphQL: a retry gets the same answer, another input 422', async () => {
    const send = (amount: string) =>
      `mutation { sendEvmNative(network: "base", input: { to: "${RECIPIENT}", amount: "${amount}" }) { ${TRANSFER} } }`;
    const idempotencyKey = `evm-native-${Date.now()}`;
    const sent = await graphql(facade, send('0.125'), idempotencyKey);
    expect(sent.body.errors, JSON.stringify(sent.body.errors)).toBeUndefined();
    const transfer = sent.body.data!.sendEvmNative as Record<string, string>;
    expect(transfer).toMatchObject({ kind: 'native', asset: 'ETH', amount: '0.125', from: address, token: null });
    const direct = await graphql(service.t, `{ evmTransfer(hash: "${transfer.hash}") { ${TRANSFER} } }`);
    expect(direct.body.data!.evmTransfer).toEqual(transfer);
    const received = await service.t.services.evmChains.sandboxFor('base').nativeBalance(RECIPIENT);

    expect((await graphql(facade, send('0.125'), idempotencyKey)).body).toEqual(sent.body);
    const reused = await graphql(facade, send('0.5'), idempotencyKey);
    expect(reused.body.errors![0]!.extensions).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      field: 'Idempotency-Key',
    });
    // Sent once: the chain moved the amount once.
    expect(await service.t.services.evmChains.sandboxFor('base').nativeBalance(RECIPIENT)).toBe(received);
    const sends = await graphql(service.t, '{ evmTransfers(first: 100) { hash } }');
    expect(sends.body.data!.evmTransfers.filter((t: { hash: string }) => t.hash === transfer.hash)).toHaveLength(1);
  });

  it('sends a token once per Idempotency-Key over REST through the graph: the answer is the upstream transfer, a retry the same answer', async () => {
    const idempotencyKey = `evm-token-${Date.now()}`;
    const body = { token: 'usdc', to: RECIPIENT, amount: '12.5' };
    const sent = await rest(facade, 'POST', '/api/v1/evm/base/send-token', body, idempotencyKey);
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body.data).toMatchObject({ kind: 'token', asset: 'USDC', amount: '12.5', amountRaw: '12500000' });
    const direct = await rest(service.t, 'GET', `/api/v1/evm/base/transactions/${sent.body.data.hash}`);
    expect(sent.body.data).toEqual(direct.body.data);

    expect(await rest(facade, 'POST', '/api/v1/evm/base/send-token', body, idempotencyKey)).toEqual(sent);
    const reused = await rest(facade, 'POST', '/api/v1/evm/base/send-token', { ...body, amount: '1' }, idempotencyKey);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ statusCode: 422 });
    const usdc = service.t.services.evmChains.sandboxFor('base').tokenAddress('USDC');
    expect(await service.t.services.evmChains.sandboxFor('base').tokenBalance(RECIPIENT, usdc)).toBe(12_500_000n);

    // The upstream's refusal of a send too large for the balance reaches the caller with its code.
    const tooMuch = `mutation { sendEvmToken(network: "base", token: "USDC", input: { to: "${RECIPIENT}", amount: "999999" }) { hash } }`;
    const directRefusal = await graphql(service.t, tooMuch);
    expect(directRefusal.body.errors![0]!.extensions.code).toBe('INSUFFICIENT_FUNDS');
    expect((await graphql(facade, tooMuch)).body.errors![0]!.extensions.code).toBe('INSUFFICIENT_FUNDS');
  });

  it("answers NOT_IN_FACADE on the EVM REST routes whose fields a facade does not ask (the wallet's history, the sandbox faucet)", async () => {
    for (const [method, url, payload] of [
      ['GET', '/api/v1/evm/transactions'],
      ['GET', `/api/v1/evm/base/transactions/0x${'ab'.repeat(32)}`],
      ['POST', '/api/v1/evm/base/sandbox/faucet', {}],
    ] as const) {
      const answer = await rest(facade, method, url, payload);
      expect(answer.status, url).toBe(501);
      expect(answer.body).toMatchObject({ statusCode: 501, error: 'Not Implemented' });
    }
  });

  it('with UPSTREAM_ROUTES=spec leaves every EVM field out of the graph, and refuses its REST routes clearly', async () => {
    for (const query of [
      '{ evmWallet { address } }',
      '{ evmNetworks { id } }',
      '{ evmBalance(network: "base") { amount } }',
      '{ evmTokenBalance(network: "base", token: "USDC") { amount } }',
      '{ evmPortfolio(network: "base") { address } }',
      `mutation { sendEvmNative(network: "base", input: { to: "${RECIPIENT}", amount: "1" }) { hash } }`,
      `mutation { sendEvmToken(network: "base", token: "USDC", input: { to: "${RECIPIENT}", amount: "1" }) { hash } }`,
    ]) {
      const answer = await graphql(specFacade, query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.errors![0]!.extensions.code, query).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    for (const [method, url, payload] of [
      ['GET', '/api/v1/evm/networks'],
      ['GET', '/api/v1/evm/base/portfolio'],
      ['POST', '/api/v1/evm/base/send-native', { to: RECIPIENT, amount: '1' }],
    ] as const) {
      const answer = await rest(specFacade, method, url, payload);
      expect(answer.status, url).toBe(501);
      expect(answer.body).toMatchObject({ statusCode: 501, error: 'Not Implemented' });
      expect(answer.body.message).toContain('facade mode');
    }
  });
});

/** A wallet's balance as this gateway's REST answers it, in the envelope. */
const balanceAnswer = (data: Record<string, unknown>) => ({
  statusCode: 200,
  message: 'Balance retrieved successfully',
  data: {
    network: 'base',
    address: RECIPIENT,
    symbol: 'ETH',
    token: null,
    decimals: 18,
    amount: '1.5',
    amountRaw: '1500000000000000000',
    ...data,
  },
});

describe('a facade whose upstream answers the EVM reads out of shape', () => {
  const s = facadeOnSpecUpstream();

  it('reads a balance in shape, once per request however often the document asks it', async () => {
    const { key } = s.upstream.addUser();
    s.upstream.gatewayAnswers.set('/api/v1/evm/base/balance', balanceAnswer({}));
    const before = s.upstream.received.filter((path) => path === '/api/v1/evm/base/balance').length;
    const answer = await s.graphql(
      key,
      '{ a: evmBalance(network: "base") { amount } b: evmBalance(network: "base") { amountRaw } }',
    );
    expect(answer).toEqual({ data: { a: { amount: '1.5' }, b: { amountRaw: '1500000000000000000' } } });
    // A symbol in any case is one token: asked once, in capitals.
    const usdc = '/api/v1/evm/base/tokens/USDC/balance';
    s.upstream.gatewayAnswers.set(
      usdc,
      balanceAnswer({ symbol: 'USDC', token: RECIPIENT, decimals: 6, amount: '2.5', amountRaw: '2500000' }),
    );
    const tokens = await s.graphql(
      key,
      '{ a: evmTokenBalance(network: "base", token: "usdc") { amount } b: evmTokenBalance(network: "base", token: "USDC") { amount } }',
    );
    expect(tokens).toEqual({ data: { a: { amount: '2.5' }, b: { amount: '2.5' } } });
    expect(s.upstream.received.filter((path) => path === usdc)).toHaveLength(1);
    expect(s.upstream.received.filter((path) => path === '/api/v1/evm/base/balance').length).toBe(before + 1);
  });

  it.each<[string, string, string, unknown]>([
    ['an address that is a number', '/api/v1/evm/address', '{ evmWallet { address } }', { data: { address: 42 } }],
    [
      'an amount that is not its raw units',
      '/api/v1/evm/base/balance',
      '{ evmBalance(network: "base") { amount } }',
      balanceAnswer({ amount: '2' }),
    ],
    [
      'another network than the one asked',
      '/api/v1/evm/base/balance',
      '{ evmBalance(network: "base") { amount } }',
      balanceAnswer({ network: 'polygon' }),
    ],
    [
      "a token's balance as a JSON number",
      '/api/v1/evm/base/tokens/USDC/balance',
      '{ evmTokenBalance(network: "base", token: "USDC") { amount } }',
      balanceAnswer({ symbol: 'USDC', token: RECIPIENT, decimals: 6, amount: '1', amountRaw: 1000000 }),
    ],
    [
      'a portfolio without its tokens',
      '/api/v1/evm/base/portfolio',
      '{ evmPortfolio(network: "base") { address } }',
      { data: { address: RECIPIENT, network: 'base', chainId: 8453, native: balanceAnswer({}).data } },
    ],
    [
      'a network this gateway does not know',
      '/api/v1/evm/networks',
      '{ evmNetworks { id } }',
      {
        data: [
          {
            id: 'dogechain',
            chainId: 2000,
            name: 'Dogechain',
            native: { symbol: 'DOGE', name: 'Doge', decimals: 18 },
            explorer: 'https://explorer.dogechain.dog/tx/',
            dataFee: false,
            tokens: [],
          },
        ],
      },
    ],
  ])('answers UPSTREAM_BAD_ANSWER for %s, counted, with nothing of the answer', async (_case, path, query, body) => {
    const { key } = s.upstream.addUser();
    s.upstream.gatewayAnswers.set(path, body);
    const faults = s.facade.services.upstream!.faultCounts().get('bad_answer') ?? 0;
    const answer = await s.graphql(key, query);
    expect(answer.data ?? null).toBeNull();
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]!.extensions.code).toBe('UPSTREAM_BAD_ANSWER');
    expect(JSON.stringify(answer)).not.toMatch(/polygon|dogechain|1500000000000000000|0x5aAeb/i);
    expect(s.facade.services.upstream!.faultCounts().get('bad_answer')).toBe(faults + 1);
    // The gateway's REST route runs the same graph: 502 in the general error body.
    const rest = await s.facade.app.inject({ method: 'GET', url: path, headers: { 'x-api-key': key } });
    expect(rest.statusCode).toBe(502);
    expect(rest.json()).toMatchObject({ statusCode: 502, error: 'Bad Gateway' });
  });
});
