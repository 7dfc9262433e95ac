import { tracingChannel } from 'node:diagnostics_channel';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACTED_PATHS } from '../../src/app.js';
import { safeSerializers } from '../../src/observability/log-safety.js';
import { type RequestLineFields, requestLineWriter } from '../../src/observability/request-line.js';

/** A logger configured as the app's (level, redaction, serializers), writing into an array. */
function capturing(options: pino.LoggerOptions = {}) {
  const lines: string[] = [];
  const stream = { write: (line: string) => lines.push(line) };
  const logger = pino(
    {
      level: 'info',
      redact: REDACTED_PATHS,
      serializers: safeSerializers,
      // One time for both writers, so their lines can be compared byte for byte.
      timestamp: () => ',"time":1764000000000',
      ...options,
    },
    stream,
  );
  return { logger, lines };
}

const base: RequestLineFields = {
  reqId: '0f8b5a52-0d0b-4b8e-9a3c-6a1f5f0e2b11',
  traceId: undefined,
  credentialId: undefined,
  method: 'GET',
  route: '/api/v1/user/me',
  operation: undefined,
  statusCode: 200,
  durationMs: 1.3,
};

const cases: Array<[string, Partial<RequestLineFields>]> = [
  ['the fewest fields', {}],
  [
    'every field',
    {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      credentialId: 'b3c1f0e2-1111-2222-3333-444455556666',
      operation: 'Home',
      method: 'POST',
      route: '/graphql',
    },
  ],
  ['a caller-chosen request id', { reqId: 'svc-a:42.retry_1' }],
  ['a route nothing matched', { route: 'unmatched', statusCode: 404, durationMs: 0 }],
  ['an anonymous operation', { operation: '(anonymous query)' }],
  ['text JSON must escape', { operation: 'quote " back \\ tab \t nl \n bell \u0007' }],
  ['text beyond ASCII', { operation: 'opération 名前 🚀' }],
  ['a long value', { operation: `Op${'x'.repeat(300)}` }],
  ['a duration that is not finite', { durationMs: Number.NaN }],
  ['a large status', { statusCode: 599, durationMs: 12_345.6 }],
];

describe('the request line', () => {
  it.each(cases)("is pino's own line, byte for byte, for %s", (_name, change) => {
    const fields = { ...base, ...change };
    const viaPino = capturing();
    viaPino.logger.info(fields, 'request completed');
    const fast = capturing();
    requestLineWriter(fast.logger)!(fields);
    expect(fast.lines).toEqual(viaPino.lines);
    expect(JSON.parse(fast.lines[0]!)).toMatchObject({
      level: 30,
      msg: 'request completed',
      statusCode: fields.statusCode,
    });
  });

  it("keeps a root logger's own bindings where pino puts them", () => {
    const viaPino = capturing({ base: { pid: 7, hostname: 'gw-1', region: 'eu' } });
    viaPino.logger.info(base, 'request completed');
    const fast = capturing({ base: { pid: 7, hostname: 'gw-1', region: 'eu' } });
    requestLineWriter(fast.logger)!(base);
    expect(fast.lines).toEqual(viaPino.lines);
  });

  it('escapes a lone surrogate, so the line stays valid UTF-8 JSON', () => {
    const fast = capturing();
    requestLineWriter(fast.logger)!({ ...base, operation: 'bad\ud800' });
    expect(fast.lines[0]).toContain('"operation":"bad\\ud800"');
    expect(JSON.parse(fast.lines[0]!).operation).toBe('bad\ud800');
  });

  it('writes nothing while the level is above info, and writes again once it is back', () => {
    const fast = capturing({ level: 'warn' });
    const write = requestLineWriter(fast.logger)!;
    write(base);
    expect(fast.lines).toEqual([]);
    fast.logger.level = 'info';
    write(base);
    expect(fast.lines).toHaveLength(1);
    fast.logger.level = 'error';
    write(base);
    expect(fast.lines).toHaveLength(1);
  });

  it('leaves lines pino shapes differently to pino', () => {
    const stream = { write: () => undefined };
    expect(requestLineWriter(pino({ mixin: () => ({ tenant: 'x' }) }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ formatters: { log: (o) => o } }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ messageKey: 'message' }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ nestedKey: 'payload' }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ msgPrefix: '[gw] ' }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ hooks: { streamWrite: (s) => s } }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({}, pino.multistream([{ stream }])))).toBeUndefined();
    expect(
      requestLineWriter(pino({ hooks: { logMethod: (args, method) => method(...args) } }, stream)),
    ).toBeUndefined();
  });

  it('leaves a line with a serialized or redacted key to pino, so a redaction added later is kept', () => {
    const stream = { write: () => undefined };
    expect(requestLineWriter(pino({ redact: ['credentialId'] }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ redact: ['*.secret'] }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ serializers: { route: (route: string) => route } }, stream))).toBeUndefined();
    expect(requestLineWriter(pino({ redact: ['req.headers.cookie'] }, stream))).toBeDefined();
  });

  it('follows bindings the root logger is given after the writer was made', () => {
    const viaPino = capturing();
    const fast = capturing();
    const write = requestLineWriter(fast.logger)!;
    viaPino.logger.setBindings({ region: 'eu' });
    fast.logger.setBindings({ region: 'eu' });
    viaPino.logger.info(base, 'request completed');
    write(base);
    expect(fast.lines).toEqual(viaPino.lines);
  });

  it('writes at the levels pino would, with its levels in descending order too', () => {
    for (const level of ['info', 'warn'] as const) {
      const viaPino = capturing({ level, levelComparison: 'DESC' });
      const fast = capturing({ level, levelComparison: 'DESC' });
      viaPino.logger.info(base, 'request completed');
      requestLineWriter(fast.logger)!(base);
      expect(fast.lines).toEqual(viaPino.lines);
    }
  });

  it("hands the line to pino while something listens to pino's lines", () => {
    const fast = capturing();
    const write = requestLineWriter(fast.logger)!;
    const seen: unknown[] = [];
    const listeners = {
      start: (message: unknown) => seen.push(message),
      end: () => undefined,
      asyncStart: () => undefined,
      asyncEnd: () => undefined,
      error: () => undefined,
    };
    const channel = tracingChannel('pino_asJson');
    channel.subscribe(listeners);
    try {
      expect(write(base)).toBe(false);
      expect(fast.lines).toEqual([]);
    } finally {
      channel.unsubscribe(listeners);
    }
    expect(write(base)).toBe(true);
    expect(fast.lines).toHaveLength(1);
  });

  it('leaves the line to pino when its error key is one of the line’s keys', () => {
    const stream = { write: () => undefined };
    expect(requestLineWriter(pino({ errorKey: 'operation', serializers: { err: (e) => e } }, stream))).toBeUndefined();
  });

  it('is not made for a logger that is not pino (logging off)', () => {
    const silent = { info: () => undefined } as unknown as pino.Logger;
    expect(requestLineWriter(silent)).toBeUndefined();
  });
});
