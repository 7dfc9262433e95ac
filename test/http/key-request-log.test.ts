import { describe, expect, it } from 'vitest';
import { KeyRequestLog, type LoggedRequest, loggablePath, MAX_LOGGED_PATH } from '../../src/http/key-request-log.js';

let clock = 0;
const request = (requestId: string, path = '/api/v1/user/me'): LoggedRequest => ({
  at: ++clock,
  method: 'GET',
  path,
  statusCode: 200,
  durationMs: 1.5,
  requestId,
});
const idsOf = (log: KeyRequestLog, key: string) => log.of(key).map((r) => r.requestId);

describe('the per-key request log (memory ring)', () => {
  it('keeps each key’s last requests, newest first, dropping its oldest past the per-key bound', () => {
    const log = new KeyRequestLog({ perKey: 3, overall: 100 });
    for (let i = 1; i <= 5; i++) log.record('key-a', request(`a${i}`));
    log.record('key-b', request('b1'));
    expect(idsOf(log, 'key-a')).toEqual(['a5', 'a4', 'a3']);
    expect(idsOf(log, 'key-b')).toEqual(['b1']);
    expect(idsOf(log, 'key-c')).toEqual([]);
    expect(log.size).toBe(4);
  });

  it('holds at most the overall bound, dropping the oldest request held whichever key it belongs to', () => {
    const log = new KeyRequestLog({ perKey: 4, overall: 5 });
    log.record('quiet', request('q1'));
    log.record('busy', request('b1'));
    log.record('quiet', request('q2'));
    log.record('busy', request('b2'));
    log.record('busy', request('b3'));
    expect(log.size).toBe(5);
    // The sixth request pushes out the oldest of all: the quiet key's first.
    log.record('busy', request('b4'));
    expect(log.size).toBe(5);
    expect(idsOf(log, 'quiet')).toEqual(['q2']);
    expect(idsOf(log, 'busy')).toEqual(['b4', 'b3', 'b2', 'b1']);
    // The next pushes out b1, the oldest of all now, so the busy key stays within its bound.
    log.record('busy', request('b5'));
    expect(idsOf(log, 'busy')).toEqual(['b5', 'b4', 'b3', 'b2']);
    expect(idsOf(log, 'quiet')).toEqual(['q2']);
    // Then q2 goes as the oldest of all, and b2 as the busy key's fifth: both bounds at once.
    log.record('busy', request('b6'));
    expect(idsOf(log, 'quiet')).toEqual([]);
    expect(idsOf(log, 'busy')).toEqual(['b6', 'b5', 'b4', 'b3']);
    expect(log.size).toBe(4);
    expect(log.keys).toBe(1);
  });

  it('stays within both bounds under many keys: memory does not grow with traffic or with keys', () => {
    const log = new KeyRequestLog({ perKey: 10, overall: 1_000 });
    for (let i = 0; i < 50_000; i++) log.record(`key-${i % 3_000}`, request(`r${i}`));
    expect(log.size).toBe(1_000);
    expect(log.keys).toBeLessThanOrEqual(1_000);
    // The last 1,000 requests are exactly what is held: the newest of each key, in order.
    const held = new Set<string>();
    for (let k = 0; k < 3_000; k++) for (const r of log.of(`key-${k}`)) held.add(r.requestId);
    expect(held).toEqual(new Set(Array.from({ length: 1_000 }, (_, i) => `r${49_000 + i}`)));
  });

  it('keeps method, path, status, duration and request id only, as copies the reader cannot change', () => {
    const log = new KeyRequestLog({ perKey: 2, overall: 2 });
    log.record('key-a', request('a1'));
    const [entry] = log.of('key-a');
    expect(Object.keys(entry!).sort()).toEqual(['at', 'durationMs', 'method', 'path', 'requestId', 'statusCode']);
    entry!.path = '/changed';
    expect(log.of('key-a')[0]!.path).toBe('/api/v1/user/me');
  });

  it('keeps no query string values and cuts long paths', () => {
    expect(loggablePath('/graphql?query=%7Bme%7D&variables=%7B%22pin%22%3A%221234%22%7D')).toBe('/graphql?…');
    expect(loggablePath('/reset-password?token=s3cr3t')).toBe('/reset-password?…');
    expect(loggablePath('/api/v1/bills/REF-1')).toBe('/api/v1/bills/REF-1');
    const long = `/api/v1/${'x'.repeat(500)}`;
    expect(loggablePath(long)).toHaveLength(MAX_LOGGED_PATH + 1);
  });

  it('refuses bounds that cannot hold', () => {
    expect(() => new KeyRequestLog({ perKey: 0, overall: 10 })).toThrow(RangeError);
    expect(() => new KeyRequestLog({ perKey: 10, overall: 5 })).toThrow(RangeError);
  });
});
