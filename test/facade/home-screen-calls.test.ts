import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { facadeSurface } from '../../src/graphql/facade-fields.js';
import { FACADE_HOME_SCREEN } from '../../src/graphql/home-screen.js';
import { buildFacadeSchema } from '../../src/graphql/schema.js';
import { worstCaseUpstreamCalls } from '../../src/graphql/upstream-call-budget.js';
import { createTestApp, type StartedTestApp, startTestApp, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';

/** This gateway in service mode as the upstream, with 50 bill records, and a facade in front of it. */
describe('the home screen through a facade', () => {
  let service: StartedTestApp;
  let facade: TestApp;

  beforeAll(async () => {
    service = await startTestApp({ listen: true });
    facade = await createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: service.baseUrl } });
    await fund(service.t, service.tenant, 20_000);
    for (let i = 0; i < 50; i++) {
      const paid = await graphql(
        service.t,
        `mutation { buyAirtime(input: { phoneNumber: "0803${String(1_000_000 + i)}", biller: "MTN", amount: ${100 + i} }) { reference } }`,
      );
      expect(paid.errors).toBeUndefined();
    }
  });

  afterAll(async () => {
    await facade.close();
    await service.t.close();
  });

  async function graphql(
    app: TestApp,
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<{ data?: Record<string, any>; errors?: unknown[] }> {
    const response = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': service.tenant.keys.FULL_ACCESS },
      payload: JSON.stringify({ query, variables }),
    });
    return response.json();
  }

  /** The home screen through the facade with `items` per list, and the upstream calls it made. */
  async function homeScreen(items: number) {
    const send = vi.spyOn(facade.services.upstream!, 'send');
    try {
      const answer = await graphql(facade, FACADE_HOME_SCREEN, { items });
      const calls = send.mock.calls.map(([request]) => `${request.method} ${request.path.split('?')[0]}`);
      // Whose key it is is asked at most once a request (then kept API_KEY_CACHE_MS): counted apart.
      const user = calls.filter((call) => call === 'GET /api/v1/user/me');
      expect(user.length).toBeLessThanOrEqual(1);
      return { answer, calls: calls.filter((call) => call !== 'GET /api/v1/user/me') };
    } finally {
      send.mockRestore();
    }
  }

  it('makes as many upstream calls for 50 items as for 5, and answers what the upstream holds', async () => {
    const five = await homeScreen(5);
    const fifty = await homeScreen(50);
    expect(five.answer.errors).toBeUndefined();
    expect(fifty.answer.errors).toBeUndefined();
    expect(five.answer.data!.latestBills.bills).toHaveLength(5);
    expect(fifty.answer.data!.latestBills.bills).toHaveLength(50);
    // One page per list and the address.
    expect(five.calls.sort()).toEqual([
      'GET /api/v1/bills/records',
      'GET /api/v1/bills/records',
      'GET /api/v1/solana/address',
    ]);
    expect(fifty.calls.sort()).toEqual(five.calls);
    // The same records as GraphQL on the upstream gives.
    const direct = await graphql(
      service.t,
      '{ billRecords(limit: 50) { total bills { reference amount type customer createdAt updatedAt } } }',
    );
    expect(fifty.answer.data!.latestBills).toEqual(direct.data!.billRecords);
    // The worst case counted before it runs does not depend on the page size either.
    const document = parse(FACADE_HOME_SCREEN);
    const schema = buildFacadeSchema(facadeSurface('gateway'));
    expect(worstCaseUpstreamCalls(schema, document, document.definitions[0] as never)).toBe(4);
  });

  it('asks the upstream once for a record however many fields of one answer ask for it', async () => {
    const reference = (await graphql(service.t, '{ billRecords(limit: 1) { bills { reference } } }')).data!.billRecords
      .bills[0].reference;
    const send = vi.spyOn(facade.services.upstream!, 'send');
    try {
      const answer = await graphql(
        facade,
        `{ a: billRecord(reference: "${reference}") { amount } b: billRecord(reference: "${reference}") { updatedAt }
           c: billRecords(limit: 3) { total } d: billRecords(limit: 3) { page } }`,
      );
      expect(answer.errors).toBeUndefined();
      const paths = send.mock.calls.map(([request]) => request.path.split('?')[0]);
      expect(paths.filter((path) => path !== '/api/v1/user/me').sort()).toEqual([
        '/api/v1/bills/records',
        `/api/v1/bills/records/reference/${reference}`,
      ]);
    } finally {
      send.mockRestore();
    }
  });
});
