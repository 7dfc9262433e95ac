import { readFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { type GraphQLObjectType, isObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  FACADE_FIELDS,
  FACADE_INPUT_FIELDS,
  facadeSurface,
  NAMED_ONLY_FIELDS,
} from '../../src/graphql/facade-fields.js';
import { FACADE_SDL_FILES, facadeSdl } from '../../src/graphql/facade-sdl.js';
import { buildFacadeSchema, buildResolvingSchema } from '../../src/graphql/schema.js';
import { readSdlFiles } from '../../src/graphql/sdl-files.js';

/** The federation fields a subgraph build adds of its own. */
const FEDERATION = new Set(['_service', '_entities']);

describe('the graph a facade serves', () => {
  it.each(['gateway', 'spec'] as const)('is committed for UPSTREAM_ROUTES=%s, as generated', (routes) => {
    const committed = readFileSync(FACADE_SDL_FILES[routes], 'utf8');
    expect(committed, 'stale: run `npm run codegen` and commit the files').toBe(facadeSdl(routes));
  });

  it.each(['gateway', 'spec'] as const)(
    'with UPSTREAM_ROUTES=%s holds exactly the listed fields, and no entity',
    (routes) => {
      const surface = facadeSurface(routes);
      const schema = buildFacadeSchema(surface);
      const full = buildResolvingSchema();
      for (const [type, listed] of Object.entries(surface.fields)) {
        const served = schema.getType(type);
        if (listed.filter((f) => !FEDERATION.has(f)).length === 0) {
          expect(served, type).toBeUndefined();
          continue;
        }
        expect(isObjectType(served), type).toBe(true);
        const names = Object.keys(isObjectType(served) ? served.getFields() : {}).filter((f) => !FEDERATION.has(f));
        expect(names.sort(), type).toEqual(listed.filter((f) => !FEDERATION.has(f)).sort());
        // Every listed field is one the service serves too: a facade is a part of the same graph.
        const fullType = full.getType(type);
        for (const name of names)
          expect(isObjectType(fullType) && fullType.getFields()[name], `${type}.${name}`).toBeTruthy();
      }
      for (const [input, listed] of Object.entries(FACADE_INPUT_FIELDS)) {
        const served = schema.getType(input);
        expect(Object.keys((served as { getFields(): object }).getFields()).sort(), input).toEqual([...listed].sort());
      }
      // Entities are fetched by id, which the spec's upstream cannot answer: no _entities.
      expect(schema.getQueryType()!.getFields()['_entities']).toBeUndefined();
      // Types the listed fields never reach are gone (the wallet's, the API keys', …).
      expect(schema.getType('Payout')).toBeUndefined();
      expect(schema.getType('ApiKey')).toBeUndefined();
    },
  );

  it("lists every served type that another domain's file extends: those fields would answer from this gateway's own records", () => {
    const extended = new Set(
      readSdlFiles().flatMap((text) => [...text.matchAll(/^extend type (\w+)/gm)].map((m) => m[1]!)),
    );
    const schema = buildFacadeSchema(facadeSurface('gateway'));
    for (const type of extended) {
      if (['Query', 'Mutation', 'Subscription'].includes(type) || !schema.getType(type)) continue;
      expect(FACADE_FIELDS[type], `${type} is served and extended elsewhere: list its fields`).toBeDefined();
    }
  });

  it.each(['gateway', 'spec'] as const)(
    'with UPSTREAM_ROUTES=%s composes with another subgraph into one supergraph',
    (routes) => {
      const receipts = parse(`
        extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
        type Receipt @key(fields: "id") { id: ID! url: String! }
        type Query { receipt(id: ID!): Receipt }
      `);
      const composed = composeServices([
        { name: 'gateway', typeDefs: parse(facadeSdl(routes)), url: 'http://facade.invalid/graphql' },
        { name: 'receipts', typeDefs: receipts, url: 'http://receipts.invalid/graphql' },
      ]);
      expect(composed.errors ?? []).toEqual([]);
      expect(composed.supergraphSdl).toContain('billRecords');
      expect(composed.supergraphSdl).toContain('receipt(');
    },
  );

  it('leaves the operations the spec only names out when the route map places them nowhere', () => {
    const gatewaySchema = buildFacadeSchema(facadeSurface('gateway'));
    const specSchema = buildFacadeSchema(facadeSurface('spec'));
    for (const root of ['Query', 'Mutation'] as const) {
      const gateway = (gatewaySchema.getType(root) as GraphQLObjectType).getFields();
      const spec = (specSchema.getType(root) as GraphQLObjectType).getFields();
      for (const field of NAMED_ONLY_FIELDS[root]!) {
        expect(gateway[field], field).toBeDefined();
        expect(spec[field], field).toBeUndefined();
      }
      const listed = FACADE_FIELDS[root]!.filter((f) => !FEDERATION.has(f));
      const served = Object.keys(spec).filter((f) => !FEDERATION.has(f));
      expect(served.length, root).toBe(listed.length - NAMED_ONLY_FIELDS[root]!.length);
    }
    // The types only those operations reach go with them (the EVM wallet's); EvmToken stays, a swap quote's token.
    for (const type of Object.keys(NAMED_ONLY_FIELDS).filter((t) => !['Query', 'Mutation'].includes(t))) {
      expect(gatewaySchema.getType(type), type).toBeDefined();
      expect(specSchema.getType(type), type).toBeUndefined();
    }
    expect(specSchema.getType('EvmToken')).toBeDefined();
  });
});
