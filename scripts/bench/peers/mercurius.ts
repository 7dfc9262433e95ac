/** Peer: Mercurius with graphql-jit on Fastify, the gateway's `User` and the same mandatory work per request. */
import Fastify from 'fastify';
import mercurius, { type MercuriusContext } from 'mercurius';
import { announce, type Caller, createPeer, databaseUrl, userJson, userSchemaSdl } from './common.js';

const peer = createPeer(databaseUrl());
const app = Fastify({ logger: false });
await app.register(mercurius, {
  schema: userSchemaSdl(),
  resolvers: {
    Query: {
      me: (_root: unknown, _args: unknown, context: MercuriusContext & { caller?: Caller }) => {
        if (!context.caller) throw new Error('Unauthorized');
        return userJson(context.caller.user);
      },
    },
  },
  // Compile a document once it has been seen once: every request here is the same document.
  jit: 1,
  context: async (request, reply) => {
    const started = process.hrtime.bigint();
    const requestId = peer.requestId();
    reply.header('x-request-id', requestId);
    const caller = await peer.authenticate(request.headers);
    reply.raw.once('finish', () =>
      peer.logRequest({
        requestId,
        route: '/graphql',
        statusCode: reply.statusCode,
        started,
        ...(caller ? { keyId: caller.keyId } : {}),
      }),
    );
    return { caller };
  },
});
await app.listen({ port: 0, host: '127.0.0.1' });
announce((app.server.address() as { port: number }).port);
process.on('SIGTERM', async () => {
  await app.close();
  await peer.close();
  process.exit(0);
});
