import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { waitUntil } from '../helpers/wait.js';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { databaseFaultOf, describeDatabaseError } from '../../src/db/faults.js';
import { restErrorReply, toDomainError } from '../../src/domain/error-mapping.js';
import { DependencyHealth } from '../../src/health/dependency-health.js';

/** What drizzle throws: its own message carries the SQL and parameters; the driver's error is the cause. */
const wrapped = (cause: object) =>
  Object.assign(new Error('Failed query: update wallets set x = $1\nparams: secret-value'), { cause });

function recordingLog() {
  const lines: { level: string; fields: object; message: string }[] = [];
  return {
    lines,
    warn: (fields: object, message: string) => lines.push({ level: 'warn', fields, message }),
    info: (fields: object, message: string) => lines.push({ level: 'info', fields, message }),
  };
}

/** A database whose one query (the readiness probe) answers as told. */
function fakeDatabase(answer: () => unknown) {
  return { execute: async () => ({ rows: [answer()] }) } as unknown as Database;
}

describe('database faults', () => {
  it('tells the database’s trouble from the request’s, through drizzle’s wrapper', () => {
    expect(
      databaseFaultOf(wrapped({ code: '57P01', message: 'terminating connection due to administrator command' })),
    ).toBe('unavailable');
    expect(databaseFaultOf({ code: '08006' })).toBe('unavailable');
    expect(databaseFaultOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'unavailable',
    );
    expect(databaseFaultOf(new Error('Connection terminated unexpectedly'))).toBe('unavailable');
    expect(
      databaseFaultOf(wrapped({ code: '25006', message: 'cannot execute UPDATE in a read-only transaction' })),
    ).toBe('read-only');
    expect(databaseFaultOf(wrapped({ code: '57014', message: 'canceling statement due to statement timeout' }))).toBe(
      'timeout',
    );
    expect(databaseFaultOf(wrapped({ code: '23505', message: 'duplicate key value' }))).toBeUndefined();
    expect(databaseFaultOf(new Error('Failed query: select 1\nparams: Connection terminated'))).toBeUndefined();
  });

  it('tells a full pool from a lost database: pg-pool’s checkout timeout is BUSY, a connection that cannot open is not', () => {
    const checkout = new Error('timeout exceeded when trying to connect');
    expect(databaseFaultOf(checkout)).toBe('pool-exhausted');
    expect(databaseFaultOf(new Error('Connection terminated due to connection timeout'))).toBe('unavailable');
    const reply = restErrorReply(toDomainError(checkout));
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable', errorCode: 'BUSY' });
    expect(reply.body['message']).not.toMatch(/cannot be reached|unavailable/);
    // Load on a server that answers, not an outage: nothing logged, readiness stays up.
    const log = recordingLog();
    const health = new DependencyHealth(
      fakeDatabase(() => ({ read_only: 'off' })),
      log,
    );
    try {
      expect(health.reportDatabaseError(checkout)).toBe(true);
      expect(health.databaseState).toBe('up');
      expect(log.lines).toEqual([]);
    } finally {
      health.close();
    }
  });

  it('answers a request cut off by the database with 503 and Retry-After, and logs no SQL parameters', () => {
    const reply = restErrorReply(toDomainError(wrapped({ code: '57P01', message: 'terminating connection' })));
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
    expect(describeDatabaseError(wrapped({ code: '57P01', message: 'terminating connection' }))).toBe(
      '57P01: terminating connection',
    );
  });
});

describe('dependency health', () => {
  it('logs one line when the database goes and one when it is back, whatever fails in between', async () => {
    const log = recordingLog();
    let readOnly: string | Error = new Error('down');
    const health = new DependencyHealth(
      fakeDatabase(() => {
        if (readOnly instanceof Error) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        return { read_only: readOnly };
      }),
      log,
      20,
    );
    try {
      for (let i = 0; i < 50; i++) health.reportDatabaseError(wrapped({ code: '57P01', message: 'terminating' }));
      expect(health.reportDatabaseError(new Error('a defect'))).toBe(false);
      expect(health.databaseState).toBe('down');
      const back = health.databaseBack(5_000);
      readOnly = 'on';
      await waitUntil(() => health.databaseState === 'read-only', { timeoutMs: 5_000, intervalMs: 10 });
      readOnly = 'off';
      await back;
      expect(health.databaseState).toBe('up');
      expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([
        'warn The database is unreachable: requests that need it answer 503 and background work waits',
        'warn The database is read-only: requests that write answer 503 until it accepts writes',
        'info The database is back',
      ]);
      expect(JSON.stringify(log.lines)).not.toMatch(/secret|params/);
    } finally {
      health.close();
    }
  });

  it('follows Redis connections: one warning when one is lost, one line when all are back', () => {
    const log = recordingLog();
    const health = new DependencyHealth(
      fakeDatabase(() => ({ read_only: 'off' })),
      log,
    );
    const clients = [0, 1].map(() => Object.assign(new EventEmitter(), { status: 'ready' }) as unknown as Redis);
    clients.forEach((client, i) => health.watchRedis(client, `connection ${i}`));
    expect(health.redisState).toBe('up');
    for (let i = 0; i < 20; i++) for (const client of clients) client.emit('error', new Error('ECONNREFUSED'));
    for (const client of clients) client.emit('close');
    expect(health.redisState).toBe('down');
    clients[0]!.emit('ready');
    expect(health.redisState).toBe('down');
    clients[1]!.emit('ready');
    expect(health.redisState).toBe('up');
    expect(log.lines.map((l) => l.level)).toEqual(['warn', 'info']);
    health.close();
    for (const client of clients) client.emit('close');
    expect(log.lines).toHaveLength(2);
  });
});
