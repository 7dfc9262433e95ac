import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';
import { type Misbehaviour, SpecUpstream } from '../fakes/spec-upstream.js';

const ME = '{ me { id email firstName lastName name phone verified isAdmin haveTransactionPin createdAt resetToken } }';

interface GraphQLAnswer {
  data?: { me?: Record<string, unknown> } | null;
  errors?: Array<{ message: string; path?: string[]; extensions: { code: string; retryAfter?: number } }>;
}

describe('a facade in front of an upstream written from the spec', () => {
  let upstream: SpecUpstream;
  let facade: TestApp;

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    // No cache of whose key it is: each case asks the upstream afresh.
    facade = await createTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url, UPSTREAM_TIMEOUT_MS: 1000, API_KEY_CACHE_MS: 0 },
    });
  });

  afterEach(() => {
    upstream.misbehaviour = undefined;
    upstream.release();
  });

  afterAll(async () => {
    await facade.close();
    await upstream.stop();
  });

  const graphql = async (key: string | undefined, query: string): Promise<GraphQLAnswer> => {
    const response = await facade.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      payload: JSON.stringify({ query }),
    });
    return response.json() as GraphQLAnswer;
  };

  it('answers me with the upstream user, through the user domain', async () => {
    const { key, user } = upstream.addUser();
    const answer = await graphql(key, ME);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.me).toEqual({
      id: user.id,
      email: user.email,
      firstName: user.firstName,
      lastName: user.lastName,
      name: user.name,
      phone: user.phone,
      verified: true,
      isAdmin: false,
      haveTransactionPin: true,
      createdAt: user.createdAt,
      // The upstream's reset token is a secret: never shown, as in service mode.
      resetToken: null,
    });
  });

  it('asks the upstream once per credential while it knows whose key it is', async () => {
    const cached = await createTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url, API_KEY_CACHE_MS: 1000 },
    });
    try {
      const { key, user } = upstream.addUser();
      const before = upstream.received.length;
      const [one, two] = await Promise.all(
        [1, 2].map(() =>
          cached.app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            payload: JSON.stringify({ query: '{ me { id } }' }),
          }),
        ),
      );
      expect([one!.json(), two!.json()]).toEqual([
        { data: { me: { id: user.id } } },
        { data: { me: { id: user.id } } },
      ]);
      expect(upstream.received.length).toBe(before + 1);
      expect(upstream.forwardedFor.at(-1)).toBe('127.0.0.1');
      // Another client address is another question: an upstream's IP allow-list may answer it otherwise.
      const elsewhere = await cached.app.inject({
        method: 'POST',
        url: '/graphql',
        remoteAddress: '203.0.113.7',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        payload: JSON.stringify({ query: '{ me { id } }' }),
      });
      expect(elsewhere.json()).toEqual({ data: { me: { id: user.id } } });
      expect(upstream.received.length).toBe(before + 2);
      expect(upstream.forwardedFor.at(-1)).toBe('203.0.113.7');
    } finally {
      await cached.close();
    }
  });

  it.each<[Misbehaviour | 'unknown-key', string, number | undefined]>([
    ['unknown-key', 'UNAUTHENTICATED', undefined],
    ['forbidden', 'FORBIDDEN', undefined],
    ['not-found', 'NOT_FOUND', undefined],
    ['rate-limit', 'RATE_LIMITED', 7],
    ['server-error', 'UPSTREAM_UNAVAILABLE', undefined],
    ['timeout', 'UPSTREAM_TIMEOUT', undefined],
    ['wrong-shape', 'UPSTREAM_BAD_ANSWER', undefined],
  ])('maps an upstream that answers %s to %s', async (misbehaviour, code, retryAfter) => {
    const { key } = upstream.addUser();
    if (misbehaviour !== 'unknown-key') upstream.misbehaviour = misbehaviour;
    const faults = new Map(facade.services.upstream!.faultCounts());
    const answer = await graphql(misbehaviour === 'unknown-key' ? `${key}-wrong` : key, ME);
    expect(answer.data ?? null).toBeNull();
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]!.extensions.code).toBe(code);
    expect(answer.errors![0]!.path).toEqual(['me']);
    expect(answer.errors![0]!.extensions.retryAfter).toBe(retryAfter);
    expect(JSON.stringify(answer)).not.toContain(key);
    if (misbehaviour === 'wrong-shape') {
      expect(facade.services.upstream!.faultCounts().get('bad_answer')).toBe((faults.get('bad_answer') ?? 0) + 1);
      const metrics = await facade.app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/gateway_upstream_faults_total\{fault="bad_answer"\} [1-9]/);
    }
  });

  it('waits for a slow upstream within the deadline', async () => {
    const { key, user } = upstream.addUser();
    upstream.misbehaviour = 'slow';
    let answered = false;
    const answering = graphql(key, '{ me { id } }').finally(() => {
      answered = true;
    });
    // Authentication and the field may each ask (nothing is cached here): each answer is held, then let go.
    while (!answered) {
      await waitUntil(() => answered || upstream.waiting > 0);
      upstream.release();
    }
    expect(await answering).toEqual({ data: { me: { id: user.id } } });
  });

  it('answers UNAUTHENTICATED without asking the upstream when no credential is sent', async () => {
    const before = upstream.received.length;
    const answer = await graphql(undefined, ME);
    expect(answer.errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    expect(upstream.received.length).toBe(before);
  });

  it.each<[Misbehaviour, number]>([
    ['server-error', 500],
    ['rate-limit', 429],
    ['forbidden', 403],
    ['not-found', 404],
    ['wrong-shape', 200],
  ])('passes REST statuses through: %s is %i', async (misbehaviour, status) => {
    const { key } = upstream.addUser();
    upstream.misbehaviour = misbehaviour;
    const response = await facade.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    expect(response.statusCode).toBe(status);
    if (status === 429) {
      expect(response.headers['retry-after']).toBe('7');
      expect(response.json()).toEqual({
        statusCode: 429,
        message: 'ThrottlerException: Too Many Requests',
        retryAfter: 7,
      });
    }
  });

  it("passes the spec's bill-not-found body through, and a timeout answers 504", async () => {
    const { key } = upstream.addUser();
    const missing = await facade.app.inject({
      method: 'GET',
      url: '/api/v1/bills/records/reference/NOPE-1',
      headers: { 'x-api-key': key },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      success: false,
      message: 'Bill not found',
      errorCode: 'BILL_NOT_FOUND',
      reference: 'NOPE-1',
    });
    upstream.misbehaviour = 'timeout';
    const late = await facade.app.inject({
      method: 'GET',
      url: '/api/v1/solana/address',
      headers: { 'x-api-key': key },
    });
    expect(late.statusCode).toBe(504);
    expect(late.json()).toMatchObject({ statusCode: 504, error: 'Gateway Timeout' });
  });

  it('leaves every field it does not ask the upstream for out of its schema; REST routes reading one answer NOT_IN_FACADE', async () => {
    const { key } = upstream.addUser();
    // Not a field of the graph a facade serves: refused as any unknown field is, before anything runs.
    const root = await graphql(key, '{ walletTransaction(id: "wt_1") { id } }');
    expect(root.data ?? null).toBeNull();
    expect(root.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(root.errors![0]!.message).toContain('Cannot query field "walletTransaction" on type "Query"');
    const nested = await graphql(key, '{ me { id businesses { id } } }');
    expect(nested.data ?? null).toBeNull();
    expect(nested.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(nested.errors![0]!.message).toContain('Cannot query field "businesses" on type "User"');
    const fee = await graphql(key, '{ billRecord(reference: "R-1") { fee } }');
    expect(fee.errors![0]!.message).toContain('Cannot query field "fee" on type "BillRecord"');
    // The gateway's own REST routes run the graph: one that reads a field left out answers 501.
    const balance = await facade.app.inject({
      method: 'GET',
      url: '/api/v1/wallet/balance',
      headers: { 'x-api-key': key },
    });
    expect(balance.statusCode).toBe(501);
    expect(balance.json()).toMatchObject({ statusCode: 501, error: 'Not Implemented' });
  });

  it("serves none of the facade's own account pages or OAuth endpoints", async () => {
    for (const [method, url] of [
      ['GET', '/dashboard'],
      ['GET', '/signup'],
      ['GET', '/connect/authorize'],
      ['POST', '/connect/token'],
    ] as const) {
      expect((await facade.app.inject({ method, url })).statusCode, `${method} ${url}`).toBe(404);
    }
  });
});
