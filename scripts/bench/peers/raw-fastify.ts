/**
 * Peer: a hand-written Fastify route doing the mandatory work of GET /api/v1/user/me — key lookup
 * (cached 1 s), one rate-limit count, one log line, `x-request-id` — and answering the same envelope.
 */
import Fastify from 'fastify';
import { announce, createPeer, databaseUrl, userJson } from './common.js';

const peer = createPeer(databaseUrl());
const app = Fastify({ logger: false });
app.get('/api/v1/user/me', async (request, reply) => {
  const started = process.hrtime.bigint();
  const requestId = peer.requestId();
  reply.header('x-request-id', requestId);
  const caller = await peer.authenticate(request.headers);
  if (!caller) {
    peer.logRequest({ requestId, route: '/api/v1/user/me', statusCode: 401, started });
    return reply.code(401).send({ statusCode: 401, message: 'Unauthorized', errors: {} });
  }
  peer.logRequest({ requestId, keyId: caller.keyId, route: '/api/v1/user/me', statusCode: 200, started });
  return { statusCode: 200, message: 'User retrieved successfully', data: userJson(caller.user), errors: {} };
});
await app.listen({ port: 0, host: '127.0.0.1' });
announce((app.server.address() as { port: number }).port);
process.on('SIGTERM', async () => {
  await app.close();
  await peer.close();
  process.exit(0);
});
