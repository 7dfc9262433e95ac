import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { readyzVerdict } from '../helpers/readiness.js';
import { errorShapeProblem } from './error-shapes.js';
import {
  deepJson,
  deepObject,
  encode,
  hostileNumber,
  hostileString,
  hostileValue,
  rawHostileSegment,
} from './hostile.js';
import { valuesOf } from './json-schema-values.js';
import { FUZZ_CONFIG, FUZZ_RUNS, FUZZ_SEED, FUZZ_TIMEOUT_MS, progress } from './settings.js';

/**
 * Walks the published OpenAPI document and, for every operation, sends generated requests: valid
 * ones from the schemas, and hostile ones (wrong types, missing and unknown fields, NUL and lone
 * surrogates, edge numbers, three-decimal amounts, deep JSON, wrong content types, oversized
 * bodies, duplicated and unknown query parameters, bad path parameters). Every answer must be
 * below 500 and every error one of the seed's bodies; the server must stay healthy throughout.
 */

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  pathParams: Array<{ name: string; schema: Schema }>;
  queryParams: Array<{ name: string; schema: Schema; required: boolean }>;
  body: Schema | undefined;
}

interface Finding {
  operation: string;
  request: string;
  status: number;
  problem: string;
  body: string;
}

function operationsOf(document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(document.paths)) {
    for (const [method, operation] of Object.entries<Schema>(item)) {
      const parameters: Schema[] = operation.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParams: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, schema: p.schema ?? {}, required: Boolean(p.required) })),
        body: operation.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return operations;
}

type Mutation =
  | { kind: 'valid' }
  | { kind: 'bodyField'; value: unknown; pick: number }
  | { kind: 'dropRequired'; pick: number }
  | { kind: 'unknownField'; value: unknown }
  | { kind: 'wholeBody'; value: unknown }
  | { kind: 'rawBody'; text: string; contentType: string }
  | { kind: 'queryValue'; value: unknown; pick: number }
  | { kind: 'queryDuplicate'; pick: number }
  | { kind: 'queryUnknown'; value: unknown }
  | { kind: 'queryRaw'; raw: string; pick: number }
  | { kind: 'pathRaw'; raw: string }
  | { kind: 'pathValue'; value: unknown }
  | { kind: 'credential'; key: 'none' | 'readOnly' | 'bogus' };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'valid' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('bodyField' as const),
      value: fc.oneof(hostileValue, hostileString, hostileNumber),
      pick: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dropRequired' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unknownField' as const), value: hostileValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wholeBody' as const), value: hostileValue }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rawBody' as const),
      text: fc.constantFrom(
        deepJson(5000),
        deepObject(3000),
        `{"name":"${'x'.repeat(70_000)}"}`,
        '{"a":',
        '{"__proto__":{"x":1}}',
        '{"constructor":{"prototype":{"x":1}}}',
        'null',
        '"text"',
        '[]',
        '<xml/>',
        'a=1&b=2',
        '\u0000',
        '{"amount":1e400}',
        '{"amount":-0}',
      ),
      contentType: fc.constantFrom(
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/xml',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/octet-stream',
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('queryValue' as const),
      value: fc.oneof(hostileString, hostileNumber, hostileValue),
      pick: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('queryDuplicate' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('queryUnknown' as const), value: hostileString }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('queryRaw' as const), raw: rawHostileSegment, pick: fc.nat() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pathRaw' as const), raw: rawHostileSegment }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pathValue' as const), value: hostileString }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('credential' as const),
      key: fc.constantFrom('none', 'readOnly', 'bogus'),
    }),
  },
);

interface Generated {
  pathValues: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  mutation: Mutation;
}

function generatorFor(operation: Operation): fc.Arbitrary<Generated> {
  const pathValues = fc.record(Object.fromEntries(operation.pathParams.map((p) => [p.name, valuesOf(p.schema)])));
  const query = fc.record(Object.fromEntries(operation.queryParams.map((p) => [p.name, valuesOf(p.schema)])), {
    requiredKeys: operation.queryParams.filter((p) => p.required).map((p) => p.name),
  });
  const body = operation.body ? valuesOf(operation.body) : fc.constant(undefined);
  return fc.record({ pathValues, query, body, mutation });
}

const at = <T>(items: T[], pick: number): T | undefined => (items.length ? items[pick % items.length] : undefined);

function requestFor(operation: Operation, g: Generated, keys: Tenant['keys']): InjectOptions {
  const m = g.mutation;
  const body = g.body && typeof g.body === 'object' && !Array.isArray(g.body) ? { ...(g.body as object) } : g.body;
  const fields = body && typeof body === 'object' ? Object.keys(operation.body?.properties ?? {}) : [];
  let payload: unknown = body;
  let contentType = 'application/json';
  if (m.kind === 'bodyField' && body && typeof body === 'object') {
    const field = at(fields, m.pick);
    if (field) (body as Record<string, unknown>)[field] = m.value;
  } else if (m.kind === 'dropRequired' && body && typeof body === 'object') {
    const field = at<string>(operation.body?.required ?? [], m.pick);
    if (field) delete (body as Record<string, unknown>)[field];
  } else if (m.kind === 'unknownField' && body && typeof body === 'object') {
    (body as Record<string, unknown>).unexpectedField = m.value;
  } else if (m.kind === 'wholeBody') {
    payload = m.value;
  } else if (m.kind === 'rawBody') {
    payload = m.text;
    contentType = m.contentType;
  }

  const queryParts: string[] = Object.entries(g.query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encode(k)}=${encode(v)}`);
  const queryNames = operation.queryParams.map((p) => p.name);
  if (m.kind === 'queryValue') queryParts.push(`${encode(at(queryNames, m.pick) ?? 'page')}=${encode(m.value)}`);
  if (m.kind === 'queryDuplicate') {
    const name = at(queryNames, m.pick) ?? 'limit';
    queryParts.push(`${encode(name)}=1`, `${encode(name)}=2`);
  }
  if (m.kind === 'queryUnknown') queryParts.push(`unexpectedParam=${encode(m.value)}`);
  if (m.kind === 'queryRaw') queryParts.push(`${encode(at(queryNames, m.pick) ?? 'q')}=${m.raw}`);

  let rawPathUsed = false;
  const url = operation.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    if (m.kind === 'pathRaw' && !rawPathUsed) {
      rawPathUsed = true;
      return m.raw;
    }
    if (m.kind === 'pathValue') return encode(m.value);
    return encode(g.pathValues[name] ?? 'x');
  });
  const headers: Record<string, string> = {};
  if (m.kind !== 'credential' || m.key === 'readOnly')
    headers['x-api-key'] = m.kind === 'credential' ? keys.READ_ONLY : keys.FULL_ACCESS;
  if (m.kind === 'credential' && m.key === 'bogus') headers['x-api-key'] = 'pgw_sbx_not-a-real-key';
  const sendsBody = operation.method !== 'GET' && operation.method !== 'DELETE';
  if (sendsBody && payload !== undefined) headers['content-type'] = contentType;
  return {
    method: operation.method as InjectOptions['method'],
    url: queryParts.length ? `${url}?${queryParts.join('&')}` : url,
    headers,
    ...(sendsBody && payload !== undefined
      ? { payload: typeof payload === 'string' && m.kind === 'rawBody' ? payload : JSON.stringify(payload) }
      : {}),
  };
}

describe('REST v1 fuzzing over the OpenAPI document', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => ({ t, tenant } = await startTestApp({ config: FUZZ_CONFIG })));
  afterAll(() => t.close());

  it(
    `every operation answers generated input below 500, in the seed's error shapes (seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs each)`,
    async () => {
      const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
      const operations = operationsOf(document);
      expect(operations.length).toBeGreaterThan(50);
      const findings: Finding[] = [];
      const statuses = new Map<number, number>();
      let sent = 0;
      for (const [index, operation] of operations.entries()) {
        const samples = fc.sample(generatorFor(operation), { seed: FUZZ_SEED + index, numRuns: FUZZ_RUNS });
        for (const generated of samples) {
          const request = requestFor(operation, generated, tenant.keys);
          const response = await t.app.inject(request);
          sent++;
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          const name = `${operation.method} ${operation.path}`;
          const describe = `${request.method} ${String(request.url).slice(0, 200)} [${generated.mutation.kind}]`;
          if (response.statusCode >= 500) {
            findings.push({
              operation: name,
              request: describe,
              status: response.statusCode,
              problem: '5xx',
              body: response.body.slice(0, 300),
            });
          } else if (response.statusCode >= 400) {
            let body: unknown;
            try {
              body = response.json();
            } catch {
              body = undefined;
            }
            const problem = errorShapeProblem(response.statusCode, body);
            if (problem)
              findings.push({
                operation: name,
                request: describe,
                status: response.statusCode,
                problem,
                body: response.body.slice(0, 300),
              });
          }
        }
        progress(`REST ${index + 1}/${operations.length} operations, ${sent} requests, ${findings.length} findings`);
        const health = await readyzVerdict(t.app);
        if (health.statusCode !== 200)
          findings.push({
            operation: `${operation.method} ${operation.path}`,
            request: 'GET /readyz afterwards',
            status: health.statusCode,
            problem: 'unhealthy',
            body: health.body.slice(0, 300),
          });
      }
      console.info(
        `REST fuzz: ${sent} requests over ${operations.length} operations, seed ${FUZZ_SEED}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
      );
      for (const f of findings.slice(0, 40)) console.info(JSON.stringify(f));
      expect(findings).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );
});
