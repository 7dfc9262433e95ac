import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Type } from '@sinclair/typebox';
import { SendTransactionError } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { answerShape } from '../../src/domain/upstream/answer-shape.js';
import { requestUpstream } from '../../src/domain/upstream/http.js';
import { classifyRpcFailure } from '../../src/domain/upstream/solana-rpc.js';
import { failureOutcome, generate, UpstreamError } from '../../src/domain/upstream/upstream-error.js';

const upstream = { name: 'test', label: 'The test provider', credentialsHint: 'TEST_KEY' };

describe('the upstream classifier', () => {
  it('decides refused / outcome unknown / rate limited / unavailable from the raw failure alone', () => {
    const cases: Array<[Parameters<typeof generate>[0], string, string, number]> = [
      [{ upstream, mutating: true }, 'outcome_unknown', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: false }, 'unavailable', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: true, httpStatus: 502 }, 'outcome_unknown', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: false, httpStatus: 500 }, 'unavailable', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: true, httpStatus: 200, unreadable: true }, 'outcome_unknown', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: true, httpStatus: 429, retryAfterSeconds: 7 }, 'rate_limited', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: true, httpStatus: 401 }, 'unavailable', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: true, httpStatus: 403 }, 'unavailable', 'SERVICE_UNAVAILABLE', 503],
      [{ upstream, mutating: false, httpStatus: 404, lookup: true }, 'refused', 'NOT_FOUND', 404],
      [
        { upstream, mutating: true, httpStatus: 400, field: 'amount', message: 'too small' },
        'refused',
        'BAD_USER_INPUT',
        400,
      ],
      [{ upstream, mutating: true, httpStatus: 422 }, 'refused', 'BAD_USER_INPUT', 400],
      [{ upstream, mutating: true, httpStatus: 404, lookup: false }, 'refused', 'BAD_USER_INPUT', 400],
    ];
    for (const [raw, kind, code, status] of cases) {
      const error = generate(raw);
      expect(error, JSON.stringify(raw)).toBeInstanceOf(DomainError);
      expect({ kind: error.kind, code: error.code, status: error.status }, JSON.stringify(raw)).toEqual({
        kind,
        code,
        status,
      });
    }
    const limited = generate({ upstream, mutating: false, httpStatus: 429, retryAfterSeconds: 7 });
    expect(limited.retryAfter).toBe(7);
    expect(limited.message).toMatch(/rate limiting/);
    expect(generate({ upstream, mutating: false, httpStatus: 401 }).message).toContain('TEST_KEY');
    const refused = generate({ upstream, mutating: true, httpStatus: 400, field: 'amount', message: 'too small' });
    expect(refused.field).toBe('amount');
    expect(refused.message).toBe('The test provider refused amount: too small');
  });

  it('classifies an answer not in its documented shape as unreadable, naming the path and nothing of the body', () => {
    const sent = generate({ upstream, mutating: true, httpStatus: 200, unreadable: true, mismatch: '/data/id' });
    expect({ kind: sent.kind, status: sent.status, mismatch: sent.mismatch }).toEqual({
      kind: 'outcome_unknown',
      status: 503,
      mismatch: '/data/id',
    });
    expect(sent.message).toBe('The test provider failed (its answer does not have the documented shape at /data/id).');
    expect(failureOutcome(sent).refused).toBe(false);
    const read = generate({ upstream, mutating: false, httpStatus: 200, mismatch: '/' });
    expect({ kind: read.kind, status: read.status }).toEqual({ kind: 'unavailable', status: 503 });
    expect(read.message).toBe(
      'The test provider is unavailable (its answer does not have the documented shape at /). Retry later.',
    );
    // web3.js's own check quotes the value it got: only its path is kept.
    const struct = classifyRpcFailure(
      new Error(
        'failed to get balance of account x: StructError: At path: result.value -- Expected a value of type `number`, but received: `"4111111111111111"`',
      ),
      false,
    ) as UpstreamError;
    expect({ kind: struct.kind, mismatch: struct.mismatch }).toEqual({
      kind: 'unavailable',
      mismatch: '/result/value',
    });
    expect(struct.message).not.toContain('4111');
    expect(struct.cause).toBeUndefined();
  });

  it('tells a service to fail an operation only on a refusal, and to keep it pending otherwise', () => {
    expect(failureOutcome(generate({ upstream, mutating: true, httpStatus: 400 })).refused).toBe(true);
    expect(failureOutcome(generate({ upstream, mutating: true })).refused).toBe(false);
    expect(failureOutcome(generate({ upstream, mutating: true, httpStatus: 429 })).refused).toBe(false);
    expect(failureOutcome(generate({ upstream, mutating: true, httpStatus: 401 })).refused).toBe(false);
    expect(failureOutcome(new TypeError('a bug')).refused).toBe(false);
    // A sandbox provider's own refusal (it calls nothing) ends the operation too.
    expect(failureOutcome(new DomainError('BAD_USER_INPUT', 'no')).refused).toBe(true);
  });

  it('classifies what web3.js throws for an RPC node', () => {
    const http = classifyRpcFailure(
      new Error('failed to get balance of account x: Error: 503 Service Unavailable: busy'),
      false,
    );
    expect(http).toMatchObject({ kind: 'unavailable', httpStatus: 503 });
    expect(classifyRpcFailure(new Error('429 Too Many Requests: slow down'), false)).toMatchObject({
      kind: 'rate_limited',
    });
    expect(classifyRpcFailure(new TypeError('fetch failed'), true)).toMatchObject({ kind: 'outcome_unknown' });
    expect(classifyRpcFailure(Object.assign(new Error('Invalid param'), { code: -32602 }), false)).toMatchObject({
      kind: 'unavailable',
    });
    const rejected = new SendTransactionError({ action: 'send', signature: '', transactionMessage: 'bad' });
    expect(classifyRpcFailure(rejected, true)).toBe(rejected);
  });

  describe('over HTTP', () => {
    let server: Server;
    let base: string;
    let next: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '{}' };
    beforeAll(async () => {
      server = createServer((_req, res) => {
        res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
        res.end(next.body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const call = (mutating: boolean, url = `${base}/x`) =>
      requestUpstream<unknown>(
        { upstream, url, method: 'POST', body: {}, timeoutMs: 2_000, mutating },
        (status, body) => {
          const envelope = body as { ok?: boolean; error?: string };
          return status < 300 && envelope.ok ? { data: envelope } : { message: envelope.error, field: 'amount' };
        },
        answerShape(Type.Object({ ok: Type.Boolean() })),
      );
    const kindOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'ok',
        (error: unknown) => (error instanceof UpstreamError ? error.kind : `other: ${String(error)}`),
      );

    it('reads the body whatever the status, so a 200 carrying an error is a refusal', async () => {
      next = { status: 200, body: JSON.stringify({ ok: true }) };
      expect(await kindOf(call(true))).toBe('ok');
      next = { status: 200, body: JSON.stringify({ ok: false, error: 'declined' }) };
      expect(await kindOf(call(true))).toBe('refused');
      next = { status: 502, body: '<html>bad gateway</html>' };
      expect(await kindOf(call(true))).toBe('outcome_unknown');
      expect(await kindOf(call(false))).toBe('unavailable');
      // A 2xx in another shape, or a body the read cannot look into: unreadable, never a refusal.
      next = { status: 200, body: JSON.stringify({ ok: 'yes', card: '4111111111111111' }) };
      await expect(call(true)).rejects.toMatchObject({ kind: 'outcome_unknown', mismatch: '/ok' });
      await expect(call(false)).rejects.toMatchObject({ kind: 'unavailable', mismatch: '/ok' });
      expect(await call(true).catch((error: Error) => error.message)).not.toContain('4111');
      next = { status: 200, body: 'null' };
      await expect(call(true)).rejects.toMatchObject({ kind: 'outcome_unknown', mismatch: '/' });
      next = { status: 429, body: '', headers: { 'retry-after': '3' } };
      await expect(call(true)).rejects.toMatchObject({ kind: 'rate_limited', retryAfter: 3 });
      // Nobody listening: no answer at all.
      expect(await kindOf(call(true, 'http://127.0.0.1:1/x'))).toBe('outcome_unknown');
      expect(await kindOf(call(false, 'http://127.0.0.1:1/x'))).toBe('unavailable');
    });
  });
});
