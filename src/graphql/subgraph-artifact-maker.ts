import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraph, FEDERATION_UNNAMED_SUBGRAPH_NAME, printSchema } from '@apollo/federation-internals';
import { type DocumentNode, print } from 'graphql';
import { loadTypeDefs, readSdlFiles } from './sdl-files.js';
import { ARTIFACT_FILE, type SubgraphArtifact, sdlHashOf } from './subgraph-artifact.js';

/**
 * The build's half of the subgraph artifact (see subgraph-artifact.ts): Federation's validating
 * build run once, its result written as text. Only scripts/build.mjs and tests import it.
 */

/** Federation's validating build, as `buildSubgraphSchema` runs it, kept as text. */
export function makeSubgraphArtifact(typeDefs: DocumentNode, sdlHash: string): SubgraphArtifact {
  const subgraph = buildSubgraph(FEDERATION_UNNAMED_SUBGRAPH_NAME, '', typeDefs, false);
  // toGraphQLJSSchema adds empty definitions for extensions that have none; this schema has none,
  // and an artifact that would need them is refused rather than built differently.
  const extensionsOnly = (
    subgraph.schema as unknown as { emptyASTDefinitionsForExtensionsWithoutDefinition(): unknown[] }
  ).emptyASTDefinitionsForExtensionsWithoutDefinition();
  if (extensionsOnly.length > 0)
    throw new Error('the subgraph has extensions without definitions: build it with buildSubgraphSchema');
  if (!subgraph.metadata().entityType()) throw new Error('the subgraph has no entity type');
  return { sdlHash, schemaText: print(subgraph.schema.toAST()), sdl: printSchema(subgraph.schema) };
}

/** Writes the artifact of the SDL files in `dir` beside them (scripts/build.mjs, into dist/schema/). */
export function writeSubgraphArtifact(dir: string): void {
  const texts = readSdlFiles(dir);
  const artifact = makeSubgraphArtifact(loadTypeDefs(dir, texts), sdlHashOf(texts));
  writeFileSync(join(dir, ARTIFACT_FILE), JSON.stringify(artifact));
}
