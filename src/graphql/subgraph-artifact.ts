import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { addResolversToSchema } from '@apollo/subgraph/dist/schema-helper/index.js';
import { entitiesResolver } from '@apollo/subgraph/dist/types.js';
import { buildASTSchema, type DocumentNode, type GraphQLSchema, parse, print } from 'graphql';

/**
 * The subgraph schema as `buildSubgraphSchema` makes it, computed once by the build and read by
 * every start. Building it validates the SDL against Federation's rules and then GraphQL's, in
 * code that runs once per process and so runs cold: about 0.4 s of a 3 s warm start
 * (docs/benchmarks.md, "Footprint and start"). The build writes what that produced (the schema's
 * AST as GraphQL text, and the SDL that `_service` answers) beside the SDL files, keyed by a hash
 * of them; a start whose SDL files hash the same builds the schema from that text without
 * validating it again, and attaches the same resolvers. Anything else (tests from the sources, an
 * edited SDL file, no artifact) builds it the validating way. test/graphql/subgraph-artifact.test.ts
 * proves both ways give the same schema and the same `_service` SDL.
 *
 * This module is what a start reads; the build's half, which needs Federation's own code (about
 * 850 kB of it, a tenth of a second to load), is subgraph-artifact-maker.ts, so a start whose
 * artifact is good never loads that code.
 */
export interface SubgraphArtifact {
  /** sha256 of the SDL files' text, in the order loadTypeDefs reads them. */
  sdlHash: string;
  /** The subgraph schema's AST as Federation hands it to graphql-js, printed. */
  schemaText: string;
  /** What `_service { sdl }` answers. */
  sdl: string;
  /** Types the text defines empty only because the SDL has nothing but extensions of them: built without an AST node, as Federation builds them. */
  withoutAstNode?: string[];
}

export const ARTIFACT_FILE = '.subgraph.json';
/**
 * The artifacts of the graphs a facade serves (one per route map), in one file, each keyed by the
 * hash of its cut SDL. A facade needs them more than the service does: in the bundle, the
 * validating build runs Federation's code from node_modules, whose graphql-js is not the bundle's,
 * and a schema made by one graphql-js is refused by the other ("Expected … to be a GraphQL schema").
 */
export const FACADE_ARTIFACTS_FILE = '.subgraph-facade.json';

export function sdlHashOf(texts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const text of texts) hash.update(text).update('\0');
  return hash.digest('hex');
}

/** The key of a facade's artifact: the hash of its cut SDL as printed. */
export function facadeSdlHash(typeDefs: DocumentNode): string {
  return sdlHashOf([print(typeDefs)]);
}

/** The artifact in `path` (one, or a list of them) made from SDL hashing `sdlHash`. */
export function readSubgraphArtifact(path: string, sdlHash: string): SubgraphArtifact | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const read = JSON.parse(readFileSync(path, 'utf8')) as SubgraphArtifact | SubgraphArtifact[];
    return (Array.isArray(read) ? read : [read]).find((artifact) => artifact.sdlHash === sdlHash);
  } catch {
    return undefined; // unreadable: the validating build makes the same schema
  }
}

/**
 * The executable schema from an artifact: what `buildSubgraphSchema` returns for the same SDL and
 * resolvers (its `_service`, `_entities` and `_Entity` resolvers, then the domains').
 */
export function schemaFromArtifact(artifact: SubgraphArtifact, resolvers: GraphQLResolverMap<unknown>): GraphQLSchema {
  const schema = buildASTSchema(parse(artifact.schemaText, { noLocation: true }), {
    assumeValid: true,
    assumeValidSDL: true,
  });
  for (const name of artifact.withoutAstNode ?? []) {
    const type = schema.getType(name);
    if (type) type.astNode = undefined;
  }
  const queryRoot = schema.getQueryType()!.name;
  const { sdl } = artifact;
  // A graph without entities (a facade's: its types lose @key) has no _entities and no _Entity.
  const entities = schema.getType('_Entity') !== undefined;
  addResolversToSchema(schema, {
    [queryRoot]: {
      _service: () => ({ sdl }),
      ...(entities && {
        _entities: (_source: unknown, { representations }: { representations: unknown[] }, context: unknown, info) =>
          entitiesResolver({ representations, context, info }),
      }),
    },
    ...(entities && { _Entity: { __resolveType: (parent: { __typename: string }) => parent.__typename } }),
  } as GraphQLResolverMap<unknown>);
  addResolversToSchema(schema, resolvers);
  return schema;
}
