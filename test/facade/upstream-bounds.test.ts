import { parse } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DomainError } from '../../src/domain/errors.js';
import { UpstreamAllowance } from '../../src/domain/facade/upstream-allowance.js';
import { facadeSurface } from '../../src/graphql/facade-fields.js';
import { buildFacadeSchema } from '../../src/graphql/schema.js';
import { UPSTREAM_CALLS, worstCaseUpstreamCalls } from '../../src/graphql/upstream-call-budget.js';
import { SpecUpstream } from '../fakes/spec-upstream.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ThrowawayRedis } from '../helpers/throwaway-servers.js';
import { waitUntil } from '../helpers/wait.js';
import { ManualClock } from '../../src/domain/clock.js';

const RECORDS = '/api/v1/bills/records';
const VALIDATE = '/api/v1/bills/validate';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; path?: string[]; extensions: { code: string; retryAfter?: number } }>;
}

describe('the worst case of upstream calls, counted before an operation runs', () => {
  const schema = buildFacadeSchema(facadeSurface('gateway'));
  const worst = (text: string) => {
    const document = parse(text);
    return worstCaseUpstreamCalls(schema, document, document.definitions[0] as never);
  };

  it('counts every upstream field of the graph, each alias once, fragments spread in', () => {
    for (const coordinate of Object.keys(UPSTREAM_CALLS)) {
      const [type, field] = coordinate.split('.') as [string, string];
      expect(
        schema.getType(type) && (schema.getType(type) as never as { getFields(): object }).getFields(),
        coordinate,
      ).toHaveProperty(field);
    }
    expect(worst('{ apiInfo { version } }')).toBe(0);
    expect(
      worst('{ a: billRecords(page: 1) { total } b: billRecords(page: 2) { total } solanaWallet { address } }'),
    ).toBe(3);
    // The EVM reads and sends at the route map's places: one call each, a portfolio's balances with it.
    expect(
      worst(
        '{ evmPortfolio(network: "base") { native { amount } tokens { amount } } a: evmBalance(network: "base") { amount } b: evmNetworks { id } }',
      ),
    ).toBe(3);
    expect(
      worst(
        'mutation { sendEvmNative(network: "base", input: { to: "0x0", amount: "1" }) { hash } sendEvmToken(network: "base", token: "USDC", input: { to: "0x0", amount: "1" }) { hash } }',
      ),
    ).toBe(2);
    // One field asked twice under one name is one call, as graphql-js merges it.
    expect(worst('{ billRecords { total } billRecords { page } }')).toBe(1);
    expect(
      worst(
        'query { ...A ...B } fragment A on Query { me { id } offrampAssets { token } } fragment B on Query { me { email } }',
      ),
    ).toBe(2);
    // @skip and @include count as asked: the worst case, whatever the variables.
    expect(worst('query ($x: Boolean!) { me @skip(if: $x) { id } solanaWallet @include(if: $x) { address } }')).toBe(2);
  });

  it("counts a payment's stored form once, and not the page size of a list", () => {
    const pay = 'buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 100 })';
    expect(worst(`mutation { ${pay} { reference } }`)).toBe(1);
    expect(worst(`mutation { ${pay} { reference updatedAt providerData } }`)).toBe(2);
    expect(worst('{ billRecords(limit: 100) { bills { updatedAt providerData } } }')).toBe(1);
  });
});

describe("a request's upstream allowance", () => {
  it('gives each call what remains of the deadline, and refuses a call past it or past the budget', () => {
    let now = 10_000;
    const refused: string[] = [];
    const codeOf = (take: () => unknown) => {
      try {
        take();
        return undefined;
      } catch (error) {
        return (error as DomainError).code;
      }
    };
    const allowance = new UpstreamAllowance(
      800,
      2,
      (why) => refused.push(why),
      () => now,
    );
    expect(allowance.take()).toBe(800);
    now += 500;
    expect(allowance.take()).toBe(300);
    expect(codeOf(() => allowance.take())).toBe('UPSTREAM_BUDGET_EXCEEDED');
    const late = new UpstreamAllowance(
      800,
      5,
      (why) => refused.push(why),
      () => now,
    );
    now += 795;
    // 5 ms left: no answer could come in time, and nothing is sent.
    expect(codeOf(() => late.take())).toBe('UPSTREAM_TIMEOUT');
    expect(refused).toEqual(['budget', 'deadline']);
  });
});

/** Two facades sharing a Redis, a third without one, all in front of one upstream written from the spec. */
describe('bounded upstream work in facade mode', () => {
  let upstream: SpecUpstream;
  let redis: ThrowawayRedis;
  let one: TestApp;
  let two: TestApp;
  let alone: TestApp;
  // The facades' time: a request's deadline and the upstream's waits are walked by the test.
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    [upstream, redis] = await Promise.all([new SpecUpstream().start(), ThrowawayRedis.start()]);
    const config = {
      GATEWAY_MODE: 'facade' as const,
      UPSTREAM_URL: upstream.url,
      UPSTREAM_TIMEOUT_MS: 5_000,
      UPSTREAM_REQUEST_DEADLINE_MS: 800,
      UPSTREAM_CALL_BUDGET: 3,
      UPSTREAM_CALLS_PER_MINUTE: 5,
    };
    [one, two, alone] = await Promise.all([
      createTestApp({ config: { ...config, REDIS_URL: redis.url }, clock }),
      createTestApp({ config: { ...config, REDIS_URL: redis.url }, clock }),
      createTestApp({ config, clock }),
    ]);
    expect(await one.services.rateLimiter.ready()).toBe(true);
    expect(await two.services.rateLimiter.ready()).toBe(true);
  });

  afterEach(() => {
    upstream.misbehaviour = undefined;
    upstream.misbehavingPath = undefined;
    upstream.release();
  });

  afterAll(async () => {
    await Promise.all([one, two, alone].map((app) => app?.close()));
    await upstream?.stop();
    await redis?.stopServer();
  });

  const graphql = async (app: TestApp, key: string, query: string): Promise<Answer> => {
    const response = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: JSON.stringify({ query }),
    });
    return {
      status: response.statusCode,
      retryAfter: response.headers['retry-after'] as string | undefined,
      ...(response.json() as object),
    };
  };
  const sentTo = (path: string) => upstream.received.filter((p) => p === path).length;
  const refusals = (app: TestApp, why: string) => app.services.upstream!.refusalCounts().get(why as never) ?? 0;

  it('refuses an operation over UPSTREAM_CALL_BUDGET before any upstream call, with its own code', async () => {
    const { key } = upstream.addUser();
    expect((await graphql(one, key, '{ me { id } }')).errors).toBeUndefined();
    const before = upstream.received.length;
    const counted = refusals(one, 'budget');
    const refused = await graphql(
      one,
      key,
      '{ a: billRecords(page: 1) { total } b: billRecords(page: 2) { total } solanaWallet { address } offrampAssets { token } }',
    );
    expect(refused.status).toBe(400);
    expect(refused.data).toBeUndefined();
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors![0]!.extensions.code).toBe('UPSTREAM_BUDGET_EXCEEDED');
    expect(refused.errors![0]!.message).toContain('4 calls');
    expect(upstream.received.length).toBe(before);
    expect(refusals(one, 'budget')).toBe(counted + 1);
    const metrics = await one.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/gateway_upstream_refusals_total\{reason="budget"\} [1-9]/);
    // At the budget it runs.
    const within = await graphql(
      one,
      key,
      '{ a: billRecords(page: 1) { total } solanaWallet { address } offrampAssets { token } }',
    );
    expect(within.errors).toBeUndefined();
  });

  /**
   * Two validations in one mutation (its fields run one after the other: the second is sent once
   * the first is answered), the first held upstream while `passMs` of the request's 800 ms pass.
   */
  async function validationsWith(passMs: number) {
    const { key } = upstream.addUser();
    expect((await graphql(one, key, '{ me { id } }')).errors).toBeUndefined();
    upstream.misbehaviour = 'slow';
    upstream.misbehavingPath = VALIDATE;
    const sentBefore = sentTo(VALIDATE);
    const input = '(input: { customer: "45012345678", billerCode: "BIL204", itemCode: "UB204" }) { customer }';
    const answer = graphql(one, key, `mutation { a: validateBillCustomer${input} b: validateBillCustomer${input} }`);
    await waitUntil(() => upstream.waiting === 1);
    clock.advance(passMs);
    upstream.release();
    const answered = await answer;
    expect(answered.errors!.map((e) => [e.path, e.extensions.code])).toEqual([[['b'], 'UPSTREAM_TIMEOUT']]);
    return { message: answered.errors![0]!.message, sent: sentTo(VALIDATE) - sentBefore };
  }

  it('gives all the upstream calls of a request one deadline: a later call gets what remains of it', async () => {
    // The second, never answered, has the 300 ms that remain, not UPSTREAM_TIMEOUT_MS (5 s) of its own.
    const { message, sent } = await validationsWith(500);
    expect(message).toContain('within 0.3 s');
    expect(sent).toBe(2);
  });

  it('sends nothing more once the deadline has passed, and counts the refusal', async () => {
    const counted = refusals(one, 'deadline');
    const { sent } = await validationsWith(800);
    expect(sent).toBe(1);
    expect(refusals(one, 'deadline')).toBe(counted + 1);
  });

  it("holds the upstream's Retry-After for the partner on every instance sharing Redis, without calling the upstream", async () => {
    const { key } = upstream.addUser();
    const { key: other } = upstream.addUser();
    for (const app of [one, two, alone]) expect((await graphql(app, key, '{ me { id } }')).errors).toBeUndefined();
    upstream.misbehaviour = 'rate-limit';
    upstream.misbehavingPath = RECORDS;
    const first = await graphql(one, key, '{ billRecords { total } }');
    expect(first.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 7 });
    upstream.misbehaviour = undefined;
    const before = upstream.received.length;
    const counted = refusals(two, 'retry_after');
    // The other instance refuses the whole operation at once, 429 with what remains of the wait.
    const held = await graphql(two, key, '{ billRecords { total } }');
    expect(held.status).toBe(429);
    expect(held.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    expect(Number(held.retryAfter)).toBeGreaterThanOrEqual(6);
    expect(Number(held.retryAfter)).toBeLessThanOrEqual(7);
    // REST pass-through too, in the spec's rate-limit body.
    const rest = await two.app.inject({ method: 'GET', url: RECORDS, headers: { 'x-api-key': key } });
    expect(rest.statusCode).toBe(429);
    expect(rest.json()).toMatchObject({ statusCode: 429 });
    expect(upstream.received.length).toBe(before);
    expect(refusals(two, 'retry_after')).toBe(counted + 2);
    // Another partner is served; an instance without the shared Redis did not hear of the wait.
    expect((await graphql(two, other, '{ billRecords { total } }')).errors).toBeUndefined();
    expect((await graphql(alone, key, '{ billRecords { total } }')).errors).toBeUndefined();
    expect(sentTo(RECORDS)).toBeGreaterThanOrEqual(2);
  });

  it('counts a partner’s calls per minute across instances, at each operation’s worst case, before sending', async () => {
    const { key } = upstream.addUser();
    // Whose key it is, learned by both instances first (a call outside any operation's count).
    for (const app of [one, two]) expect((await graphql(app, key, '{ apiInfo { version } }')).errors).toBeUndefined();
    const three = '{ a: billRecords(page: 1) { total } solanaWallet { address } offrampAssets { token } }';
    expect((await graphql(one, key, three)).errors).toBeUndefined();
    const before = upstream.received.length;
    const counted = refusals(two, 'partner_budget');
    const refused = await graphql(two, key, three);
    expect(refused.status).toBe(429);
    expect(refused.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    expect(refused.errors![0]!.message).toContain('UPSTREAM_CALLS_PER_MINUTE');
    expect(upstream.received.length).toBe(before);
    expect(refusals(two, 'partner_budget')).toBe(counted + 1);
  });
});
