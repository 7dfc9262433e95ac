import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { type DocumentNode, type GraphQLSchema, parse } from 'graphql';
import { type GuardOptions, guardRootFields } from './directives/guards.js';
import type { Resolvers } from './generated/resolvers-types.js';
import { apiInfoResolvers } from './resolvers/api-info.js';
import { apiKeyResolvers } from './resolvers/api-keys.js';
import { eventResolvers } from './resolvers/events.js';
import { offrampResolvers } from './resolvers/offramp.js';
import { walletResolvers } from './resolvers/wallet.js';
import { billResolvers } from './resolvers/bills.js';
import { solanaResolvers } from './resolvers/solana.js';
import { customerResolvers } from './resolvers/customers.js';
import { graphEdgeResolvers } from './resolvers/graph-edges.js';
import { graphNodeResolvers } from './resolvers/graph-nodes.js';
import { scalarResolvers } from './resolvers/scalars.js';
import { userResolvers } from './resolvers/users.js';
import { webhookResolvers } from './resolvers/webhooks.js';
import { statementResolvers } from './resolvers/statements.js';
import { auditResolvers } from './resolvers/audit.js';

export const SCHEMA_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../schema');

/** One SDL file per domain in schema/, read in name order. */
export function loadTypeDefs(dir = SCHEMA_DIR): DocumentNode {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  const documents = files.map((f) => parse(readFileSync(join(dir, f), 'utf8')));
  return { kind: documents[0]!.kind, definitions: documents.flatMap((d) => d.definitions) };
}

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
  customerResolvers,
  graphNodeResolvers,
  graphEdgeResolvers,
  statementResolvers,
  auditResolvers,
];

/** The executable Federation 2 subgraph schema, with access rules and limits applied. Built once per process. */
export function buildSchema(options: GuardOptions = { federationRouterOnly: false }): GraphQLSchema {
  return guardRootFields(buildResolvingSchema(), options);
}

/**
 * The same schema and resolvers with no access rules or limits applied: for the bench's bare Apollo
 * peer, which runs the gateway's resolvers without the gateway's request path. Never served.
 */
export function buildResolvingSchema(): GraphQLSchema {
  return buildSubgraphSchema({ typeDefs: loadTypeDefs(), resolvers: mergeResolvers(resolvers) });
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
