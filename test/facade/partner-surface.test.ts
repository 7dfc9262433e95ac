import { describe, expect, it } from 'vitest';
import { facadeOnSpecUpstream } from '../helpers/facade-on-spec-upstream.js';

/**
 * The sandbox partner surface in facade mode (docs/facade.md, "The sandbox partner surface"): the
 * test clock, the trigger, trusted documents and per-credential limits, the events page and the
 * request log each act on the facade's own records, which hold none of the upstream's accounts, so
 * none is served: their GraphQL fields are not in the facade's graph, their REST routes answer
 * NOT_IN_FACADE and their pages 404. The upstream is asked only whose key it is.
 */
describe('the sandbox partner surface in facade mode', () => {
  const s = facadeOnSpecUpstream();

  it('leaves the test clock, trigger and GraphQL access fields out of its graph', async () => {
    const { key } = s.upstream.addUser();
    for (const [field, query] of [
      ['testClocks', '{ testClocks { id } }'],
      ['createTestClock', 'mutation { createTestClock(name: "c") { id } }'],
      ['advanceTestClock', 'mutation { advanceTestClock(id: "tc_1", seconds: 3600) { id } }'],
      ['triggerSandboxEvent', 'mutation { triggerSandboxEvent(type: "deposit.completed") { eventId } }'],
      ['graphqlAccess', '{ graphqlAccess { trustedDocumentsOnly } }'],
    ] as const) {
      const answer = await s.graphql(key, query);
      expect(answer.data ?? null, field).toBeNull();
      expect(answer.errors![0]!.extensions.code, field).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(answer.errors![0]!.message, field).toContain(`Cannot query field "${field}"`);
    }
  });

  it('answers the REST routes of the test clock and the trigger NOT_IN_FACADE, asking the upstream only whose key it is', async () => {
    const { key } = s.upstream.addUser();
    const before = s.upstream.received.length;
    for (const [method, url, payload] of [
      ['GET', '/api/v1/sandbox/test-clocks', undefined],
      ['POST', '/api/v1/sandbox/test-clocks', { name: 'c' }],
      ['POST', '/api/v1/sandbox/test-clocks/tc_1/advance', { seconds: 3600 }],
      ['POST', '/api/v1/events/sandbox/trigger', { type: 'deposit.completed' }],
    ] as const) {
      const response = await s.facade.app.inject({
        method,
        url,
        headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { payload: JSON.stringify(payload) } : {}),
      });
      expect(response.statusCode, `${method} ${url}`).toBe(501);
      expect(response.json(), `${method} ${url}`).toMatchObject({ statusCode: 501, error: 'Not Implemented' });
    }
    // Only whose key it is was asked (once, then cached): nothing of the routes' own.
    expect(new Set(s.upstream.received.slice(before))).toEqual(new Set(['/api/v1/user/me']));
  });

  it('serves neither the events page nor the request log', async () => {
    for (const url of ['/dashboard/events', '/dashboard/events/ev_1', '/dashboard/keys/k_1/requests']) {
      expect((await s.facade.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});
