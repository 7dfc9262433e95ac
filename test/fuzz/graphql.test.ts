import fc from 'fast-check';
import {
  type GraphQLField,
  type GraphQLObjectType,
  getNamedType,
  isLeafType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyzVerdict } from '../helpers/readiness.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { deepJson, hostileNumber, hostileString, hostileValue } from './hostile.js';
import { inputValuesOf } from './graphql-values.js';
import { FUZZ_CONFIG, FUZZ_RUNS, FUZZ_SEED, FUZZ_TIMEOUT_MS, progress } from './settings.js';

/**
 * Every query and mutation of the schema, called with generated variables: valid ones from the
 * argument types, and hostile ones (wrong types, NUL and lone surrogates in variables and in
 * inline literals, edge numbers, missing and unknown fields), plus malformed and oversized
 * documents. No answer may be an HTTP 5xx or an INTERNAL_SERVER_ERROR, every error carries
 * `extensions.code`, and the server stays healthy.
 */

interface RootOperation {
  kind: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
}

/** The field's scalar sub-fields (one level), so the selection is valid whatever the type. */
function selectionOf(field: GraphQLField<unknown, unknown>): string {
  const type = getNamedType(field.type);
  if (isLeafType(type)) return '';
  if (!isObjectType(type)) return '{ __typename }';
  const leaves = Object.values((type as GraphQLObjectType).getFields())
    .filter((f) => isLeafType(getNamedType(f.type)) && f.args.every((a) => !isNonNullType(a.type)))
    .map((f) => f.name)
    .slice(0, 12);
  return `{ __typename ${leaves.join(' ')} }`;
}

function documentOf({ kind, field }: RootOperation, inlineString?: { arg: string; literal: string }): string {
  const args = field.args.filter((a) => a.name !== inlineString?.arg);
  const declared = args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const passed = [
    ...args.map((a) => `${a.name}: $${a.name}`),
    ...(inlineString ? [`${inlineString.arg}: ${inlineString.literal}`] : []),
  ].join(', ');
  return `${kind} Fuzz${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''} ${selectionOf(field)} }`;
}

type Variant =
  | { kind: 'valid' }
  | { kind: 'hostileVariable'; pick: number; value: unknown }
  | { kind: 'hostileNested'; pick: number; value: unknown }
  | { kind: 'missingVariable'; pick: number }
  | { kind: 'unknownNested'; pick: number }
  | { kind: 'inlineLiteral'; literal: string }
  | { kind: 'noKey' };

const variant: fc.Arbitrary<Variant> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'valid' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('hostileVariable' as const),
      pick: fc.nat(),
      value: fc.oneof(hostileString, hostileNumber, hostileValue),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('hostileNested' as const),
      pick: fc.nat(),
      value: fc.oneof(hostileString, hostileNumber),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('missingVariable' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unknownNested' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('inlineLiteral' as const),
      literal: fc.constantFrom('"a\\u0000b"', '"\\u0000"', '"x\\uD800"', '"\\uDC00"', '""', '"\\"}"'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'noKey' as const }) },
);

const at = <T>(items: readonly T[], pick: number): T | undefined =>
  items.length ? items[pick % items.length] : undefined;

describe('GraphQL fuzzing over the schema', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => ({ t, tenant } = await startTestApp({ config: FUZZ_CONFIG })));
  afterAll(() => t.close());

  it(
    `every query and mutation answers generated variables without a 5xx or internal error (seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs each)`,
    async () => {
      const schema = buildSchema();
      const roots: RootOperation[] = [
        ...Object.values(schema.getQueryType()!.getFields()).map((field) => ({ kind: 'query' as const, field })),
        ...Object.values(schema.getMutationType()!.getFields()).map((field) => ({ kind: 'mutation' as const, field })),
      ].filter((r) => !r.field.name.startsWith('_'));
      expect(roots.length).toBeGreaterThan(50);
      const findings: Array<Record<string, unknown>> = [];
      const statuses = new Map<number, number>();
      let sent = 0;
      const send = async (root: string, payload: unknown, key: string | undefined, label: string) => {
        const response = await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
          payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
        });
        sent++;
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        let body: { errors?: Array<{ message?: string; extensions?: { code?: string } }> } | undefined;
        try {
          body = response.json();
        } catch {
          body = undefined;
        }
        const internal = body?.errors?.find(
          (e) => !e.extensions?.code || e.extensions.code === 'INTERNAL_SERVER_ERROR',
        );
        if (response.statusCode >= 500 || !body || internal)
          findings.push({ root, label, status: response.statusCode, body: response.body.slice(0, 300) });
      };

      for (const [index, root] of roots.entries()) {
        const args = root.field.args;
        const variables = fc.record(Object.fromEntries(args.map((a) => [a.name, inputValuesOf(a.type)])), {
          requiredKeys: args.filter((a) => isNonNullType(a.type)).map((a) => a.name),
        });
        const samples = fc.sample(fc.record({ variables, variant }), { seed: FUZZ_SEED + index, numRuns: FUZZ_RUNS });
        for (const { variables: generated, variant: v } of samples) {
          const vars = { ...(generated as Record<string, unknown>) };
          let query = documentOf(root);
          const argNames = args.map((a) => a.name);
          if (v.kind === 'hostileVariable') {
            const name = at(argNames, v.pick);
            if (name) vars[name] = v.value;
          } else if (v.kind === 'hostileNested' || v.kind === 'unknownNested') {
            const objectArg = args.find((a) => vars[a.name] && typeof vars[a.name] === 'object');
            const target = objectArg ? (vars[objectArg.name] as Record<string, unknown>) : undefined;
            if (target && !Array.isArray(target)) {
              const copy = { ...target };
              if (v.kind === 'unknownNested') copy.unexpectedField = 'x';
              else {
                const key = at(Object.keys(copy), v.pick);
                if (key) copy[key] = v.value;
              }
              vars[objectArg!.name] = copy;
            }
          } else if (v.kind === 'missingVariable') {
            const name = at(argNames, v.pick);
            if (name) delete vars[name];
          } else if (v.kind === 'inlineLiteral') {
            const stringArg = args.find(
              (a) => isScalarType(getNamedType(a.type)) && ['String', 'ID'].includes(getNamedType(a.type).name),
            );
            if (stringArg) {
              query = documentOf(root, { arg: stringArg.name, literal: v.literal });
              delete vars[stringArg.name];
            }
          }
          await send(
            root.field.name,
            { query, variables: vars },
            v.kind === 'noKey' ? undefined : tenant.keys.FULL_ACCESS,
            v.kind,
          );
        }
        progress(`GraphQL ${index + 1}/${roots.length} root fields, ${sent} requests, ${findings.length} findings`);
        const health = await readyzVerdict(t.app);
        if (health.statusCode !== 200) findings.push({ root: root.field.name, label: 'unhealthy afterwards' });
      }

      // Documents that are broken as documents.
      const key = tenant.keys.FULL_ACCESS;
      for (const query of [
        '{ me { id ',
        `{ ${'me { id } '.repeat(3000)} }`,
        `query { ${'a: me { id } '.repeat(100)} }`,
        `{ me ${'@skip(if: false) '.repeat(200)} { id } }`,
        `{ ${'__typename '.repeat(5000)} }`,
        'subscription { events { id } }',
        '\u0000',
        '{ me(id: "\\u0000") { id } }',
      ])
        await send('(document)', { query }, key, query.slice(0, 40));
      for (const raw of [
        deepJson(5000),
        '{"query":',
        '{"query": 5}',
        '{"query": "{ me { id } }", "variables": "x"}',
        '[]',
      ])
        await send('(body)', raw, key, raw.slice(0, 40));

      console.info(
        `GraphQL fuzz: ${sent} requests over ${roots.length} root fields, seed ${FUZZ_SEED}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
      );
      for (const f of findings.slice(0, 40)) console.info(JSON.stringify(f));
      expect(findings).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );
});
