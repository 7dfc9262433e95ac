/**
 * Peer: Sofa (sofa-api) turning the gateway's `User` schema into REST (`GET /api/me`) on Node's http
 * server, with the same mandatory work per request (key lookup cached 1 s, one rate-limit count, one
 * log line, `x-request-id`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { buildSchema } from 'graphql';
import { useSofa } from 'sofa-api';
import { announce, type Caller, createPeer, databaseUrl, userJson, userSchemaSdl } from './common.js';

const peer = createPeer(databaseUrl());
const schema = buildSchema(userSchemaSdl());
schema.getQueryType()!.getFields().me!.resolve = (_root, _args, context: { caller?: Caller }) => {
  if (!context.caller) throw new Error('Unauthorized');
  return userJson(context.caller.user);
};

/** Per request: what the log line needs, filled in by the context function. */
const facts = new WeakMap<IncomingMessage, { keyId?: string }>();
const router = useSofa({
  basePath: '/api',
  schema,
  context: async (serverContext) => {
    const req = (serverContext as unknown as { req: IncomingMessage }).req;
    const caller = await peer.authenticate({
      'x-api-key': serverContext.request.headers.get('x-api-key') ?? undefined,
    });
    if (caller) facts.set(req, { keyId: caller.keyId });
    return { caller };
  },
});

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const started = process.hrtime.bigint();
  const requestId = peer.requestId();
  res.setHeader('x-request-id', requestId);
  res.once('finish', () => {
    const keyId = facts.get(req)?.keyId;
    peer.logRequest({ requestId, route: '/api/me', statusCode: res.statusCode, started, ...(keyId ? { keyId } : {}) });
  });
  router(req, res);
});
server.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port));
process.on('SIGTERM', async () => {
  server.close();
  await peer.close();
  process.exit(0);
});
