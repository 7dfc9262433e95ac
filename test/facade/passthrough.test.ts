import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { originFormTarget } from '../../src/facade/passthrough.js';
import { SPEC_REST_PATHS } from '../../src/facade/spec-paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { answerBytes, RecordingUpstream } from '../fakes/recording-upstream.js';

const KEY = 'pk_live_facade_passthrough_secret_0001';

/** One request per path of the spec, as a partner would send it: path parameters, a query, a JSON body. */
const CASES: Array<{ method: 'GET' | 'POST'; url: string; body?: string }> = [
  { method: 'GET', url: '/api/v1' },
  { method: 'GET', url: '/api/v1/user/me' },
  {
    method: 'POST',
    url: '/api/v1/wallet/deposit/payment-method',
    body: '{"amount": 5000.5, "paymentMethodId":"pm_1","reference":"dep-1","currency":"NGN","meta":{"a":[1,2]}}',
  },
  {
    method: 'POST',
    url: '/api/v1/bills/pay/electricity',
    body: '{"meterNumber":"45012345678","amount":2000,"disco":"IKEDC"}',
  },
  {
    method: 'POST',
    url: '/api/v1/bills/pay/airtime',
    body: '{"phoneNumber":"08030000000","biller":"MTN","amount":500}',
  },
  {
    method: 'POST',
    url: '/api/v1/bills/buy-airtime',
    body: '{ "phoneNumber" : "08030000000", "biller":"GLO", "amount":100 }',
  },
  {
    method: 'POST',
    url: '/api/v1/bills/validate',
    body: '{"customer":"08030000000","billerCode":"BIL099","itemCode":"AT099"}',
  },
  { method: 'GET', url: '/api/v1/bills/records?type=AIRTIME&status=SUCCESS&page=2&limit=5&billerName=MTN%20Nigeria' },
  { method: 'GET', url: '/api/v1/bills/records/reference/BILL-REF-42' },
  { method: 'GET', url: '/api/v1/solana-exchange/quote/token-to-sol?inputMint=So1&amount=10' },
  { method: 'GET', url: '/api/v1/solana-exchange/quote/token-to-token?inputMint=A1&outputMint=B2&amount=1.5' },
  {
    method: 'POST',
    url: '/api/v1/solana-exchange/swap-token-to-sol',
    body: '{"outputMint":"M1","amount":1,"slippageBps":50}',
  },
  {
    method: 'POST',
    url: '/api/v1/solana/transfer-token',
    body: '{"to":"W1","tokenMintAddress":"M1","amount":"2.5","network":"devnet"}',
  },
  { method: 'GET', url: '/api/v1/solana/address' },
  { method: 'GET', url: '/api/v1/offramp/exchange/quote?token=USDT&network=base&amount=100&fiat=NGN' },
  { method: 'GET', url: '/api/v1/offramp/exchange/assets' },
  {
    method: 'POST',
    url: '/api/v1/customers/biz_123',
    body: '{"name":"Ada Ọbi ₦","phone":"+234","email":"a@b.c","externalRef":"x"}',
  },
];

/** Fields no proxy may pass on (RFC 9110 §7.6.1), and the one the request's Connection header names. */
const HOP_BY_HOP = ['keep-alive', 'te', 'upgrade', 'proxy-authorization', 'proxy-connection', 'x-hop-only'];

const UPSTREAM_BODY = '{"statusCode":201,"message":"Done","data":{"id":"u-1","amount":5000.5},"errors":{}}';

describe('REST v1 pass-through (facade mode)', () => {
  let upstream: RecordingUpstream;
  let facade: TestApp;

  beforeAll(async () => {
    upstream = await new RecordingUpstream().start();
    facade = await createTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: `${upstream.url}/partner/`, UPSTREAM_TIMEOUT_MS: 500 },
    });
  });

  afterAll(async () => {
    await facade.close();
    await upstream.stop();
  });

  it('covers every path of the spec', () => {
    const covered = new Set(CASES.map((c) => `${c.method} ${c.url.split('?')[0]}`));
    for (const { method, path } of SPEC_REST_PATHS) {
      const concrete = path.replace(':reference', 'BILL-REF-42').replace(':businessId', 'biz_123');
      expect(covered, `${method} ${path}`).toContain(`${method} ${concrete}`);
    }
  });

  it.each(CASES)('$method $url reaches the upstream as sent and its answer comes back unchanged', async (c) => {
    upstream.answer = answerBytes(
      '201 Created',
      [
        'Content-Type: application/json; charset=utf-8',
        'X-Upstream-Trace: t-77',
        'Set-Cookie: a=1; Path=/',
        'Set-Cookie: b=2; Path=/',
        'X-Request-Id: upstream-request-9',
        'Connection: keep-alive',
        'Keep-Alive: timeout=5',
      ],
      UPSTREAM_BODY,
    );
    const before = upstream.received.length;
    const idempotencyKey = `idem-${c.url.length}`;
    const response = await facade.app.inject({
      method: c.method,
      url: c.url,
      headers: {
        'X-API-KEY': KEY,
        'x-partner-trace': 'kept as is',
        'user-agent': 'partner-sdk/1.0',
        connection: 'keep-alive, X-Hop-Only',
        'x-hop-only': 'dropped',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        'proxy-authorization': 'Basic Zm9vOmJhcg==',
        // Forged by the caller: the upstream hears who the client is from the facade, not from it.
        'x-forwarded-for': '10.9.9.9',
        forwarded: 'for=10.9.9.9',
        'x-forwarded-host': 'admin.internal',
        'x-real-ip': '10.9.9.9',
        ...(c.body !== undefined ? { 'content-type': 'application/json', 'idempotency-key': idempotencyKey } : {}),
      },
      ...(c.body !== undefined ? { payload: c.body } : {}),
    });

    expect(upstream.received.length).toBe(before + 1);
    const seen = upstream.received.at(-1)!;
    expect(seen.requestLine).toBe(`${c.method} /partner${c.url} HTTP/1.1`);
    expect(seen.headers.host).toBe(`127.0.0.1:${upstream.port}`);
    expect(seen.headers['x-api-key']).toBe(KEY);
    expect(seen.headers['x-partner-trace']).toBe('kept as is');
    expect(seen.headers['user-agent']).toBe('partner-sdk/1.0');
    for (const name of HOP_BY_HOP) expect(seen.headers, name).not.toHaveProperty(name);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    for (const name of ['forwarded', 'x-forwarded-host', 'x-real-ip'])
      expect(seen.headers, name).not.toHaveProperty(name);
    // undici may say how it keeps its own connection; never the caller's options.
    expect(seen.headers.connection ?? 'keep-alive').toBe('keep-alive');
    if (c.body !== undefined) {
      expect(seen.headers['idempotency-key']).toBe(idempotencyKey);
      expect(seen.headers['content-type']).toBe('application/json');
      expect(seen.body.equals(Buffer.from(c.body, 'utf8'))).toBe(true);
      expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(c.body)));
    } else {
      expect(seen.body.length).toBe(0);
    }

    expect(response.statusCode).toBe(201);
    expect(response.body).toBe(UPSTREAM_BODY);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['x-upstream-trace']).toBe('t-77');
    expect(response.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(response.headers['x-request-id']).toBe('upstream-request-9');
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength(UPSTREAM_BODY)));
    expect(response.headers).not.toHaveProperty('keep-alive');
  });

  it("passes the upstream's 429 and its Retry-After through as they are, then refuses that partner until then without asking", async () => {
    const limited = 'pk_live_facade_passthrough_limited_0002';
    const body = '{"statusCode":429,"message":"Too many requests","retryAfter":7}';
    upstream.answer = answerBytes('429 Too Many Requests', ['Content-Type: application/json', 'Retry-After: 7'], body);
    const ask = (key: string) =>
      facade.app.inject({ method: 'GET', url: '/api/v1/solana/address', headers: { 'x-api-key': key } });
    const response = await ask(limited);
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('7');
    expect(response.body).toBe(body);
    // Until the wait ends the facade answers for the upstream, in the spec's rate-limit body.
    upstream.answer = answerBytes('200 OK', ['Content-Type: application/json'], '{}');
    const before = upstream.received.length;
    const refused = await ask(limited);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(6);
    expect(refused.json()).toMatchObject({ statusCode: 429, retryAfter: Number(refused.headers['retry-after']) });
    expect(upstream.received.length).toBe(before);
    // Another partner is not held back.
    expect((await ask(KEY)).statusCode).toBe(200);
    expect(upstream.received.length).toBe(before + 1);
  });

  it('forwards a bearer credential as sent', async () => {
    upstream.answer = answerBytes('200 OK', ['Content-Type: application/json'], '{}');
    await facade.app.inject({
      method: 'GET',
      url: '/api/v1/solana-exchange/quote/token-to-token?inputMint=A&outputMint=B&amount=1',
      headers: { authorization: 'Bearer at_live_token_1' },
    });
    expect(upstream.received.at(-1)!.headers.authorization).toBe('Bearer at_live_token_1');
  });

  it('refuses a path parameter that would leave its segment upstream, sending nothing', async () => {
    const before = upstream.received.length;
    const response = await facade.app.inject({
      method: 'GET',
      url: '/api/v1/bills/records/reference/..%2F..%2F..%2Finternal%2Fdebug',
      headers: { 'x-api-key': KEY },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', details: [{ field: 'path' }] });
    expect(upstream.received.length).toBe(before);
  });

  it('answers 504 in the error body when the upstream is silent, and never sends the POST again', async () => {
    upstream.silentOn.add('/api/v1/bills/pay/airtime');
    const sent = () => upstream.received.filter((r) => r.requestLine.includes('/bills/pay/airtime')).length;
    const before = sent();
    const response = await facade.app.inject({
      method: 'POST',
      url: '/api/v1/bills/pay/airtime',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'idempotency-key': 'idem-timeout-1' },
      payload: '{"phoneNumber":"08030000000","biller":"MTN","amount":500}',
    });
    expect(response.statusCode).toBe(504);
    const body = response.json();
    expect(body).toEqual({
      statusCode: 504,
      message: expect.stringContaining('did not answer'),
      error: 'Gateway Timeout',
    });
    expect(response.body).not.toContain(KEY);
    expect(response.body).not.toContain('127.0.0.1');
    // A later request on the same agent is answered: the POST had its one send, and no retry followed it.
    upstream.answer = answerBytes('200 OK', ['Content-Type: application/json'], '{}');
    expect(
      (await facade.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': KEY } })).statusCode,
    ).toBe(200);
    expect(sent()).toBe(before + 1);
    expect(facade.services.upstream!.faultCounts().get('timeout')).toBeGreaterThanOrEqual(1);
  });
});

describe('REST v1 pass-through over a real connection', () => {
  it('streams the body as it arrives, before the upstream has finished it', async () => {
    const upstream = await new RecordingUpstream().start();
    const facade = await createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url } });
    try {
      await facade.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (facade.app.server.address() as { port: number }).port;
      const first = '{"statusCode":200,"message":"OK","data":{"bills":[';
      const rest = '{"id":"b1"}],"page":1},"errors":{}}';
      upstream.answer = answerBytes('200 OK', ['Content-Type: application/json'], first + rest);
      upstream.splitAt = upstream.answer.length - Buffer.byteLength(rest);
      const { request } = await import('undici');
      const response = await request(`http://127.0.0.1:${port}/api/v1/bills/records?page=1`, {
        headers: { 'x-api-key': KEY },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-length']).toBe(String(Buffer.byteLength(first + rest)));
      const chunks = response.body[Symbol.asyncIterator]();
      // The first part reaches the caller while the upstream still holds the rest.
      let received = '';
      while (received.length < first.length) received += String((await chunks.next()).value);
      expect(received).toBe(first);
      upstream.finishAnswer();
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) received += String(next.value);
      expect(received).toBe(first + rest);
    } finally {
      await facade.close();
      await upstream.stop();
    }
  });
});

describe('REST v1 pass-through to an upstream that cannot be reached', () => {
  it('answers 502 in the error body', async () => {
    const gone = await new RecordingUpstream().start();
    await gone.stop();
    const facade = await createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: gone.url } });
    try {
      const response = await facade.app.inject({
        method: 'GET',
        url: '/api/v1/user/me',
        headers: { 'x-api-key': KEY },
      });
      expect(response.statusCode).toBe(502);
      expect(response.json()).toEqual({
        statusCode: 502,
        message: 'The upstream service could not be reached. Retry later.',
        error: 'Bad Gateway',
      });
    } finally {
      await facade.close();
    }
  });
});

describe('facade targets that could leave their place upstream', () => {
  it('accepts a path as sent and refuses absolute-form targets and segments that are not segments', () => {
    expect(originFormTarget('/api/v1/bills/records/reference/BILL-1%2E2?x=a/b')).toBe(
      '/api/v1/bills/records/reference/BILL-1%2E2?x=a/b',
    );
    for (const target of [
      'http://admin.internal/api/v1/user/me',
      '//admin.internal/api/v1/user/me',
      '*',
      '/api/v1/bills/records/reference/..%2F..%2Finternal',
      '/api/v1/bills/records/reference/%2E%2E',
      '/api/v1/customers/..',
      '/api/v1/customers/./x',
      '/api/v1/bills/records/reference/a%5Cb',
      '/api/v1/bills/records/reference/%E0%A4%A',
    ])
      expect(() => originFormTarget(target), target).toThrow(/path|percent/);
  });
});
