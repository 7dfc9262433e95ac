import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { type DocumentNode, GraphQLSchema } from 'graphql';
import { type GuardOptions, guardRootFields } from './directives/guards.js';
import { type FacadeSurface, facadeTypeDefs } from './facade-schema.js';
import { loadTypeDefs, readSdlFiles, SCHEMA_DIR } from './sdl-files.js';
import {
  ARTIFACT_FILE,
  FACADE_ARTIFACTS_FILE,
  facadeSdlHash,
  readSubgraphArtifact,
  schemaFromArtifact,
  sdlHashOf,
} from './subgraph-artifact.js';
import type { Resolvers } from './generated/resolvers-types.js';
import { apiInfoResolvers } from './resolvers/api-info.js';
import { apiKeyResolvers } from './resolvers/api-keys.js';
import { eventResolvers } from './resolvers/events.js';
import { offrampResolvers } from './resolvers/offramp.js';
import { walletResolvers } from './resolvers/wallet.js';
import { billResolvers } from './resolvers/bills.js';
import { solanaResolvers } from './resolvers/solana.js';
import { evmResolvers } from './resolvers/evm.js';
import { portfolioResolvers } from './resolvers/portfolio.js';
import { chainResolvers } from './resolvers/chain.js';
import { customerResolvers } from './resolvers/customers.js';
import { graphEdgeResolvers } from './resolvers/graph-edges.js';
import { graphNodeResolvers } from './resolvers/graph-nodes.js';
import { scalarResolvers } from './resolvers/scalars.js';
import { userResolvers } from './resolvers/users.js';
import { webhookResolvers } from './resolvers/webhooks.js';
import { statementResolvers } from './resolvers/statements.js';
import { auditResolvers } from './resolvers/audit.js';
import { graphqlAccessResolvers } from './resolvers/graphql-access.js';
import { facadeInboundResolvers } from './resolvers/facade-inbound.js';
import { testClockResolvers } from './resolvers/test-clocks.js';

export { loadTypeDefs, SCHEMA_DIR } from './sdl-files.js';

/** Not a bundled import: esbuild leaves a require made this way to run time (see buildResolvingSchema). */
const loadSubgraph = createRequire(import.meta.url);

const resolvers: Resolvers[] = [
  scalarResolvers,
  apiInfoResolvers,
  userResolvers,
  eventResolvers,
  apiKeyResolvers,
  webhookResolvers,
  offrampResolvers,
  walletResolvers,
  billResolvers,
  solanaResolvers,
  evmResolvers,
  portfolioResolvers,
  chainResolvers,
  customerResolvers,
  graphNodeResolvers,
  graphEdgeResolvers,
  statementResolvers,
  auditResolvers,
  graphqlAccessResolvers,
  facadeInboundResolvers,
  testClockResolvers,
];

export interface SchemaOptions extends GuardOptions {
  /** Facade mode: only what the surface lists is served (facade-fields.ts, facade-schema.ts). */
  facade?: FacadeSurface | undefined;
}

/** The executable Federation 2 subgraph schema, with access rules and limits applied. Built once per process. */
export function buildSchema(options: SchemaOptions = { federationRouterOnly: false }): GraphQLSchema {
  const resolving = options.facade ? buildFacadeSchema(options.facade) : buildResolvingSchema();
  return guardRootFields(resolving, options);
}

/** Federation's validating build, loaded from node_modules when it is first needed. */
const federationBuild: SubgraphBuild = (modules) => {
  const { buildSubgraphSchema } = loadSubgraph('@apollo/subgraph') as typeof import('@apollo/subgraph');
  return buildSubgraphSchema(modules);
};
type SubgraphBuild = (modules: { typeDefs: DocumentNode; resolvers: GraphQLResolverMap<unknown> }) => GraphQLSchema;

/**
 * The subgraph a facade serves: the service's SDL cut to the surface, with the same resolvers.
 * `dir` and `build` are the SDL's folder and the validating build (a test gives its own).
 */
export function buildFacadeSchema(
  surface: FacadeSurface,
  dir: string = SCHEMA_DIR,
  build: SubgraphBuild = federationBuild,
): GraphQLSchema {
  const typeDefs = facadeTypeDefs(loadTypeDefs(dir), surface);
  // The build's artifact of this very cut (subgraph-artifact.ts): in the bundle, the only way, as
  // Federation's build from node_modules makes a schema of another graphql-js.
  const file = join(dir, FACADE_ARTIFACTS_FILE);
  const hash = facadeSdlHash(typeDefs);
  const artifact = readSubgraphArtifact(file, hash);
  if (artifact) return schemaFromArtifact(artifact, domainResolvers());
  const schema = build({ typeDefs, resolvers: domainResolvers() });
  // Made by another graphql-js than this code's (the bundle's own): every later use would fail
  // with graphql-js's "Expected … to be a GraphQL schema", which names neither cause nor cure.
  if (!(schema instanceof GraphQLSchema))
    throw new Error(
      `No facade artifact for this route map's graph (cut SDL hash ${hash}) in ${file}, and a bundle cannot ` +
        'build one at start (Federation in node_modules uses another graphql-js). Run `npm run build` again from ' +
        'these sources: it writes the artifact of every route map (the file is missing, or an SDL file or the route ' +
        'map changed since the build).',
    );
  return schema;
}

/**
 * The same schema and resolvers with no access rules or limits applied: for the bench's bare Apollo
 * peer, which runs the gateway's resolvers without the gateway's request path. Never served.
 */
export function buildResolvingSchema(): GraphQLSchema {
  const texts = readSdlFiles();
  // The build's artifact, when it was made from these very files (see subgraph-artifact.ts).
  const artifact = readSubgraphArtifact(join(SCHEMA_DIR, ARTIFACT_FILE), sdlHashOf(texts));
  if (artifact) return schemaFromArtifact(artifact, domainResolvers());
  // Federation's validating build (tests from the sources, an edited SDL file): its code loads
  // only here, from node_modules, so a start that has the artifact never parses it.
  const { buildSubgraphSchema } = loadSubgraph('@apollo/subgraph') as typeof import('@apollo/subgraph');
  return buildSubgraphSchema({ typeDefs: loadTypeDefs(SCHEMA_DIR, texts), resolvers: domainResolvers() });
}

/** Every domain's resolvers, merged. */
export function domainResolvers(): GraphQLResolverMap<unknown> {
  return mergeResolvers(resolvers);
}

/** Merges per-domain resolver maps; a type may take fields from several domains. */
function mergeResolvers(list: Resolvers[]): GraphQLResolverMap<unknown> {
  const merged: Record<string, object> = {};
  for (const map of list) {
    for (const [typeName, value] of Object.entries(map) as [string, object][]) {
      // Scalars are class instances and taken whole; object types merge field by field.
      merged[typeName] = value.constructor === Object ? { ...merged[typeName], ...value } : value;
    }
  }
  return merged as GraphQLResolverMap<unknown>;
}
