import type { FastifyInstance } from 'fastify';

/**
 * A watch over every REST v1 error answered during the suite, however the test sent it (inject
 * or a real socket): a 400 never carries GraphQL text, and a bad-input 400 names its field in
 * `details`. Violations are collected here and failed by test/setup/rest-contract.ts after each
 * test, so a test that never looks at the body still cannot hide one.
 */
export const restContractViolations: string[] = [];

const GRAPHQL_TEXT = [/Variable "\$/, /cannot represent/, /Expected type "/, /is not defined by type/];

export function watchRestContract(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.startsWith('/api/') || reply.statusCode !== 400 || typeof payload !== 'string') return payload;
    const where = `${request.method} ${request.url.split('?')[0]} → 400 ${payload.slice(0, 300)}`;
    for (const pattern of GRAPHQL_TEXT) {
      if (pattern.test(payload)) restContractViolations.push(`GraphQL text (${pattern.source}) in ${where}`);
    }
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      restContractViolations.push(`not JSON: ${where}`);
    }
    if (body && (typeof body.message !== 'string' || body.statusCode !== 400))
      restContractViolations.push(`not the general error body: ${where}`);
    return payload;
  });
}
