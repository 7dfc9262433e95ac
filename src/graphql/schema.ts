import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { GraphQLSchema } from 'graphql';
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

/** The subgraph a facade serves: the service's SDL cut to the surface, with the same resolvers. */
export function buildFacadeSchema(surface: FacadeSurface): GraphQLSchema {
  const typeDefs = facadeTypeDefs(loadTypeDefs(SCHEMA_DIR), surface);
  // The build's artifact of this very cut (subgraph-artifact.ts): in the bundle, the only way, as
  // Federation's build from node_modules makes a schema of another graphql-js.
  const artifact = readSubgraphArtifact(join(SCHEMA_DIR, FACADE_ARTIFACTS_FILE), facadeSdlHash(typeDefs));
  if (artifact) return schemaFromArtifact(artifact, domainResolvers());
  const { buildSubgraphSchema } = loadSubgraph('@apollo/subgraph') as typeof import('@apollo/subgraph');
  return buildSubgraphSchema({ typeDefs, resolvers: domainResolvers() });
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
