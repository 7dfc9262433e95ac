/** Peer: Mercurius with graphql-jit on Fastify, the gateway's `User` and the same mandatory work per request. */
import Fastify from 'fastify';
import mercurius, { type MercuriusContext } from 'mercurius';
import { announce, type Caller, createPeer, databaseUrl, graphqlContext, meResolver, userSchemaSdl } from './common.js';

const peer = createPeer(databaseUrl());
const app = Fastify({ logger: false });
await app.register(mercurius, {
  schema: userSchemaSdl(),
  resolvers: {
    Query: {
      me: (root: unknown, args: unknown, context: MercuriusContext & { caller?: Caller }) =>
        meResolver(root, args, context),
    },
  },
  // Compile a document once it has been seen once: every request here is the same document.
  jit: 1,
  context: graphqlContext(peer),
});
await app.listen({ port: 0, host: '127.0.0.1' });
announce((app.server.address() as { port: number }).port);
process.on('SIGTERM', async () => {
  await app.close();
  await peer.close();
  process.exit(0);
});
