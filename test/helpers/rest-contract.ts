import type { FastifyInstance } from 'fastify';

/**
 * A watch over every REST v1 error answered during the suite, however the test sent it (inject
 * or a real socket): a 400 never carries GraphQL text, and a bad-input 400 names its field in
 * `details`. Violations are collected here and failed by test/setup/rest-contract.ts after each
 * test, so a test that never looks at the body still cannot hide one.
 */
export const restContractViolations: string[] = [];
/** How many REST 400s the watch has read (so a test can prove the watch sees the app's routes). */
export const restContractStats = { checked: 0 };

const GRAPHQL_TEXT = [/Variable "\$/, /cannot represent/, /Expected type "/, /is not defined by type/];

export function watchRestContract(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.startsWith('/api/') || reply.statusCode !== 400 || typeof payload !== 'string') return payload;
    restContractStats.checked++;
    const where = `${request.method} ${request.url.split('?')[0]} → 400 ${payload.slice(0, 300)}`;
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      restContractViolations.push(`not JSON: ${where}`);
    }
    // Read the decoded text (in the raw JSON a quote is escaped: Variable \"$input\").
    const text = body ? stringsOf(body).join('\n') : payload;
    for (const pattern of GRAPHQL_TEXT) {
      if (pattern.test(text)) restContractViolations.push(`GraphQL text (${pattern.source}) in ${where}`);
    }
    if (body && (typeof body.message !== 'string' || body.statusCode !== 400))
      restContractViolations.push(`not the general error body: ${where}`);
    return payload;
  });
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}
