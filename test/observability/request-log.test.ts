import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { seedTenant } from '../helpers/app.js';
import { loggingAt } from '../helpers/log-file.js';
import { requestLineWriter } from '../../src/observability/request-line.js';

type Line = Record<string, unknown> & { msg: string };

describe("a REST request's log lines", () => {
  let lines: string[] = [];
  let app: FastifyInstance;
  let key: string;
  beforeAll(async () => {
    const logging = await loggingAt();
    const services = logging.services;
    lines = logging.lines;
    key = (await seedTenant(services)).keys.READ_ONLY;
    app = await buildApp({ services, logger: { stream: logging.stream } });
    // A route that logs through its request's own logger, as the webhook and error paths do.
    app.get('/test/logs-through-request', async (request) => {
      request.log.warn({ step: 'inside' }, 'route line');
      return { ok: true };
    });
  });
  afterAll(() => app.close());

  const linesOf = (requestId: string) =>
    lines.map((line) => ({ raw: line, parsed: JSON.parse(line) as Line })).filter((l) => l.parsed.reqId === requestId);

  it("are written by the gateway's own line writer, not pino's walk, with the app's logger settings", () => {
    expect(requestLineWriter(app.log)).toBeDefined();
  });

  it('end with one request line carrying the request id, in the same place as a child logger puts it', async () => {
    const response = await app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    expect(response.statusCode).toBe(200);
    const requestId = response.headers['x-request-id'] as string;
    const own = linesOf(requestId);
    expect(own.map((l) => l.parsed.msg)).toEqual(['request completed']);
    expect(Object.keys(own[0]!.parsed).slice(0, 5)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId']);
    expect(own[0]!.parsed).toMatchObject({ method: 'GET', route: '/api/v1/user/me', statusCode: 200 });
    expect(own[0]!.raw.match(/"reqId"/g)).toHaveLength(1);
  });

  it('carry the request id on lines logged through request.log, and the request line has it once', async () => {
    const response = await app.inject({ url: '/test/logs-through-request', headers: { 'x-request-id': 'trace-me-1' } });
    expect(response.statusCode).toBe(200);
    const own = linesOf('trace-me-1');
    expect(own.map((l) => l.parsed.msg)).toEqual(['route line', 'request completed']);
    expect(own[0]!.parsed).toMatchObject({ level: 40, step: 'inside' });
    for (const line of own) expect(line.raw.match(/"reqId"/g)).toHaveLength(1);
    expect(Object.keys(own[1]!.parsed).slice(0, 5)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId']);
  });

  it("carry the trace id of the caller's traceparent, and none without one", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traced = await app.inject({
      url: '/api/v1/user/me',
      headers: { 'x-api-key': key, 'x-request-id': 'traced-1', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(traced.statusCode).toBe(200);
    expect(linesOf('traced-1').map((l) => l.parsed.traceId)).toEqual([traceId]);
    await app.inject({
      url: '/api/v1/user/me',
      headers: { 'x-api-key': key, 'x-request-id': 'untraced-1', traceparent: 'not-a-traceparent' },
    });
    expect(linesOf('untraced-1')[0]!.parsed).not.toHaveProperty('traceId');
  });
});
