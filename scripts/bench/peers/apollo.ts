/** Peer: bare Apollo Server 5 on Fastify, the gateway's `User` and the same mandatory work per request. */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo from '@as-integrations/fastify';
import Fastify from 'fastify';
import { announce, type Caller, createPeer, databaseUrl, graphqlContext, meResolver, userSchemaSdl } from './common.js';

const peer = createPeer(databaseUrl());
const app = Fastify({ logger: false });
const apollo = new ApolloServer<{ caller?: Caller }>({
  typeDefs: userSchemaSdl(),
  resolvers: { Query: { me: meResolver } },
  plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginLandingPageDisabled()],
});
await apollo.start();
await app.register(fastifyApollo(apollo), {
  context: graphqlContext(peer),
});
await app.listen({ port: 0, host: '127.0.0.1' });
announce((app.server.address() as { port: number }).port);
process.on('SIGTERM', async () => {
  await Promise.all([app.close(), apollo.stop()]);
  await peer.close();
  process.exit(0);
});
