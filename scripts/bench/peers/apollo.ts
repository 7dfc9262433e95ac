/**
 * Peer: bare Apollo Server 5 on Fastify, with the same mandatory work per request as the gateway.
 *
 * - Default: the gateway's `User` (its 20 fields) and `Query.me`, read with plain `pg`.
 * - `--graph`: the gateway's own connected graph — its schema, resolvers, services and per-request
 *   loaders (so the same SQL over the same rows) — with none of the gateway's request path: no
 *   access rules or rate limits per field, no document limits, no plugins. It serves the home-screen
 *   query, so the gateway's cost there has a peer too.
 */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo from '@as-integrations/fastify';
import Fastify from 'fastify';
import { announce, type Caller, createPeer, databaseUrl, graphqlContext, meResolver, userSchemaSdl } from './common.js';

const peer = createPeer(databaseUrl());
const graph = process.argv.includes('--graph') ? await connectedGraph() : undefined;
const app = Fastify({ logger: false });
const apollo = new ApolloServer<{ caller?: Caller }>({
  ...(graph ? { schema: graph.schema } : { typeDefs: userSchemaSdl(), resolvers: { Query: { me: meResolver } } }),
  plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginLandingPageDisabled()],
});
await apollo.start();
const mandatory = graphqlContext(peer);
await app.register(fastifyApollo(apollo), {
  context: graph
    ? async (request, reply) => graph.contextOf(await mandatory(request, reply))
    : (request, reply) => mandatory(request, reply),
});
await app.listen({ port: 0, host: '127.0.0.1' });
announce((app.server.address() as { port: number }).port);
process.on('SIGTERM', async () => {
  await Promise.all([app.close(), apollo.stop()]);
  await peer.close();
  await graph?.close();
  process.exit(0);
});

/** The gateway's schema and services over the same database, and the context its resolvers read. */
async function connectedGraph() {
  const [{ loadConfig }, { openDatabase }, { systemClock }, { createServices }, { buildResolvingSchema }, loaders] =
    await Promise.all([
      import('../../../src/config.js'),
      import('../../../src/db/client.js'),
      import('../../../src/domain/clock.js'),
      import('../../../src/services.js'),
      import('../../../src/graphql/schema.js'),
      import('../../../src/graphql/loaders.js'),
    ]);
  const config = loadConfig(process.env, { SEED_DEMO: false, WORKERS: false });
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: 'memory://' });
  const services = createServices(config, database.db, systemClock, () => undefined);
  const schema = buildResolvingSchema();
  return {
    schema,
    contextOf({ caller }: { caller?: Caller }) {
      if (!caller) return {};
      const principal = {
        kind: 'api_key' as const,
        credentialId: caller.keyId,
        userId: caller.user.id,
        environment: caller.environment,
        abilities: new Set(['READ'] as const),
      };
      let built: ReturnType<typeof loaders.createLoaders> | undefined;
      return {
        caller,
        principal,
        services,
        get loaders() {
          built ??= loaders.createLoaders(services, principal);
          return built;
        },
      };
    },
    close: () => database.close(),
  };
}
