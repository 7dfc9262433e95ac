import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { GraphQLContext } from '../../src/graphql/context.js';
import { type CompiledRoute, registerRestRoutes } from '../../src/rest/engine.js';
import { loggingAt } from '../helpers/log-file.js';

const SECRET = 'pgw_sbx_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';

/** A route whose operation fails after something else (a hook, a timeout) already answered. */
const lateRoute = (path: string, run: CompiledRoute['run']): CompiledRoute => ({
  method: 'GET',
  path,
  summary: 'Fails late',
  tag: 'Test',
  operation: 'query { __typename }',
  message: 'ok',
  response: Type.Object({}),
  document: undefined as never,
  run,
  errorOf: () => {
    throw new Error('not reached');
  },
  access: [{ public: true }],
  rootField: '__typename',
  movesValue: false,
});

describe('a REST route that fails after its reply was sent', () => {
  let lines: string[] = [];
  let app: FastifyInstance;
  const replies = new WeakMap<FastifyRequest, FastifyReply>();
  beforeAll(async () => {
    const logging = await loggingAt();
    const services = logging.services;
    lines = logging.lines;
    app = await buildApp({ services, logger: { stream: logging.stream } });
    app.addHook('onRequest', (request, reply, done) => {
      replies.set(request, reply);
      done();
    });
    registerRestRoutes(app, {
      routes: [
        lateRoute('/test/late-rejection', () => Promise.reject(new Error(`operation failed for "${SECRET}"`))),
        lateRoute('/test/late-throw', () => {
          throw new Error(`operation failed for "${SECRET}"`);
        }),
      ],
      // Answers first, as a timeout would, then lets the operation run.
      contextFor: (request) => {
        void replies.get(request)!.code(503).send({ statusCode: 503, message: 'Answered early' });
        return Promise.resolve({} as GraphQLContext);
      },
      bodyLimit: 1024,
    });
  });
  afterAll(() => app.close());

  it.each(['/test/late-rejection', '/test/late-throw'])(
    '%s: logs the error at error level with the request id, its secret blanked',
    async (url) => {
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(503);
      const requestId = response.headers['x-request-id'] as string;
      await new Promise((resolve) => setImmediate(resolve));
      const own = lines.filter((line) => line.includes(requestId));
      const late = own.map((line) => JSON.parse(line)).find((line) => line.level === 50);
      expect(late).toMatchObject({
        reqId: requestId,
        msg: 'REST route failed after its reply was sent',
        err: { type: 'Error', message: 'operation failed for "…"' },
      });
      expect(own.join('')).not.toContain(SECRET);
    },
  );
});
