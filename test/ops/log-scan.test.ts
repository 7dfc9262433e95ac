import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { safeSerializers } from '../../src/observability/log-safety.js';
import { scanLog } from '../../scripts/scan-log.js';
import { createTestApp } from '../helpers/app.js';

const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: 1763942400123, ...fields });

describe('the log scanner CI runs on the test suite log', () => {
  it('finds each kind of secret', () => {
    const hash = createHash('sha256').update('pgw_sbx_x').digest('hex');
    const bad = [
      line({ msg: 'key pgw_sbx_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg' }),
      line({ msg: 'token pgw_at_AbCdEfGhIjKlMnOpQrStUv' }),
      line({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
      line({ msg: `Failed query: select 1\nparams: ${hash}` }),
      line({ card: '5531886652142950' }),
      line({ body: { cvv: '123' } }),
      line({ pin: '3310' }),
      line({ headers: { authorization: 'Bearer abcdefghijklmnop' } }),
      line({ detail: 'Key (key_hash)=(abc) already exists.' }),
      line({ password: 'hunter2' }),
    ].join('\n');
    const rules = scanLog(bad).map((f) => f.rule);
    for (const rule of [
      'API key or OAuth token',
      'webhook signing secret',
      'key or token hash (64 hex digits)',
      'SQL parameters',
      'card number',
      'card field (number, CVV, expiry)',
      'PIN',
      'bearer credential',
      'PostgreSQL row values',
      'password',
    ])
      expect(rules).toContain(rule);
  });

  it('passes ordinary lines: timestamps, ids, trace ids, routes, amounts', () => {
    const clean = [
      line({
        reqId: '7f1c2a4e-3b9d-4c1e-9a5f-0e2d4b6c8a10',
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        credentialId: '0b6e1f7c-8a2d-4e3f-9c1b-5d7a9e2f4c6b',
        route: '/api/v1/wallet/transfer',
        statusCode: 201,
        durationMs: 12.5,
        msg: 'request completed',
      }),
      line({ amount: 150050, phone: '08031234567', reference: 'TRF-20260101-0001', password: '********' }),
      line({ msg: `signature: ${'1'.repeat(64)}` }),
    ].join('\n');
    expect(scanLog(clean)).toEqual([]);
  });
});

describe('error log lines', () => {
  it('keep the type, SQLSTATE and stack of a failed query, but not its parameters or the values PostgreSQL quotes', async () => {
    const t = await createTestApp();
    const hash = createHash('sha256').update('a key that must stay secret').digest('hex');
    let failure: unknown;
    try {
      await t.services.db.execute(sql`select id from api_keys where id = ${hash}::uuid`);
    } catch (error) {
      failure = error;
    }
    await t.close();
    expect(String((failure as Error).message)).toContain(hash);

    const write = (serializers: pino.LoggerOptions['serializers']) => {
      const lines: string[] = [];
      const stream = new Writable({ write: (chunk, _e, done) => (lines.push(chunk.toString()), done()) });
      pino({ level: 'debug', serializers }, stream).error({ err: failure }, 'query failed');
      return lines.join('');
    };
    // Pino's own error serializer writes the parameters: the scanner sees them.
    expect(scanLog(write({})).length).toBeGreaterThan(0);
    const safe = write(safeSerializers);
    expect(safe).not.toContain(hash);
    expect(scanLog(safe)).toEqual([]);
    const logged = JSON.parse(safe).err;
    expect(logged.message).toBe('Failed query: select api_keys');
    expect(logged.cause.code).toBe('22P02');
    expect(logged.stack).toContain('    at ');
  });
});
