import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraph, FEDERATION_UNNAMED_SUBGRAPH_NAME, printSchema } from '@apollo/federation-internals';
import { type DefinitionNode, type DocumentNode, Kind, print } from 'graphql';
import { loadTypeDefs, readSdlFiles } from './sdl-files.js';
import { ROUTE_SETTINGS } from '../domain/facade/upstream-routes.js';
import { facadeSurface } from './facade-fields.js';
import { facadeTypeDefs } from './facade-schema.js';
import {
  ARTIFACT_FILE,
  FACADE_ARTIFACTS_FILE,
  facadeSdlHash,
  type SubgraphArtifact,
  sdlHashOf,
} from './subgraph-artifact.js';

/**
 * The build's half of the subgraph artifact (see subgraph-artifact.ts): Federation's validating
 * build run once, its result written as text. Only scripts/build.mjs and tests import it.
 */

/**
 * Federation's validating build, as `buildSubgraphSchema` runs it, kept as text. The service's
 * graph must have an entity type; a facade's has none (`entities: false`).
 */
export function makeSubgraphArtifact(
  typeDefs: DocumentNode,
  sdlHash: string,
  { entities = true }: { entities?: boolean } = {},
): SubgraphArtifact {
  const subgraph = buildSubgraph(FEDERATION_UNNAMED_SUBGRAPH_NAME, '', typeDefs, false);
  // toGraphQLJSSchema adds an empty definition for each type that has only extensions (a facade's
  // cut can leave `extend type Mutation` alone), builds, then takes those types' AST nodes off:
  // the artifact carries the same definitions and names the types, and the start does the same.
  const extensionsOnly = (
    subgraph.schema as unknown as { emptyASTDefinitionsForExtensionsWithoutDefinition(): DefinitionNode[] }
  ).emptyASTDefinitionsForExtensionsWithoutDefinition();
  if (extensionsOnly.some((node) => node.kind === Kind.SCHEMA_DEFINITION))
    throw new Error('the subgraph extends a schema definition it does not have: build it with buildSubgraphSchema');
  if (entities && !subgraph.metadata().entityType()) throw new Error('the subgraph has no entity type');
  const ast = subgraph.schema.toAST();
  const emptied = extensionsOnly.map((node) => (node as { name: { value: string } }).name.value);
  return {
    sdlHash,
    schemaText: print({ ...ast, definitions: [...ast.definitions, ...extensionsOnly] }),
    sdl: printSchema(subgraph.schema),
    ...(emptied.length > 0 && { withoutAstNode: emptied }),
  };
}

/**
 * Writes the artifact of the SDL files in `dir` beside them (scripts/build.mjs, into dist/schema/),
 * and those of the graphs a facade serves cut from them, one per route map.
 */
export function writeSubgraphArtifact(dir: string): void {
  const texts = readSdlFiles(dir);
  const typeDefs = loadTypeDefs(dir, texts);
  writeFileSync(join(dir, ARTIFACT_FILE), JSON.stringify(makeSubgraphArtifact(typeDefs, sdlHashOf(texts))));
  const facades = ROUTE_SETTINGS.map((routes) => {
    const cut = facadeTypeDefs(typeDefs, facadeSurface(routes));
    return makeSubgraphArtifact(cut, facadeSdlHash(cut), { entities: false });
  });
  writeFileSync(join(dir, FACADE_ARTIFACTS_FILE), JSON.stringify(facades));
}
