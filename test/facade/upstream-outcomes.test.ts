import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { retryAfterSeconds, statusOutcome, transportFault } from '../../src/domain/facade/upstream-outcomes.js';

describe('the one table of upstream outcomes', () => {
  it.each([
    [400, 'BAD_USER_INPUT'],
    [401, 'UNAUTHENTICATED'],
    [403, 'FORBIDDEN'],
    [404, 'NOT_FOUND'],
    [429, 'RATE_LIMITED'],
  ])('passes a %i about the caller on as %s', (status, code) => {
    const outcome = statusOutcome(status, '12');
    expect(outcome).toBeInstanceOf(DomainError);
    expect((outcome as DomainError).code).toBe(code);
    expect((outcome as DomainError).retryAfter).toBe(status === 429 ? 12 : undefined);
  });

  it('counts a 5xx as the upstream failing and any other status as an answer it cannot read', () => {
    expect(statusOutcome(500, undefined)).toBe('server_error');
    expect(statusOutcome(503, '5')).toBe('server_error');
    expect(statusOutcome(302, undefined)).toBe('bad_answer');
    expect(statusOutcome(409, undefined)).toBe('bad_answer');
  });

  it("gives the spec's error bodies their own code, with what was asked rather than what the upstream echoed", () => {
    const body = { success: false, message: 'Bill not found', errorCode: 'BILL_NOT_FOUND', reference: '<script>' };
    const outcome = statusOutcome(404, undefined, body, { reference: 'REF-1' }) as DomainError;
    expect(outcome.code).toBe('BILL_NOT_FOUND');
    expect(outcome.reference).toBe('REF-1');
    expect(outcome.message).not.toContain('<script>');
    // The same body under another status is that status's refusal.
    expect((statusOutcome(403, undefined, body) as DomainError).code).toBe('FORBIDDEN');
    expect(
      (statusOutcome(404, undefined, { statusCode: 404, message: 'x', error: 'Not Found' }) as DomainError).code,
    ).toBe('NOT_FOUND');
  });

  it("reads the transfer's insufficient-balance answer as this gateway's REST writes it: its own code, our words", () => {
    const body = {
      statusCode: 400,
      message: 'Balance 1 < 5 at wallet 9WzD…',
      error: 'Bad Request',
      errorCode: 'INSUFFICIENT_FUNDS',
    };
    const outcome = statusOutcome(400, undefined, body) as DomainError;
    expect(outcome.code).toBe('INSUFFICIENT_FUNDS');
    expect(outcome.message).not.toContain('9WzD');
    // Under another status it is not that answer.
    expect(statusOutcome(422, undefined, body)).toBe('bad_answer');
  });

  it('passes on the names of the fields a 400 body names, never its sentences', () => {
    const body = {
      statusCode: 400,
      message: 'amount must be greater than 0.',
      error: 'Bad Request',
      details: [
        { field: 'amount', message: 'amount must be greater than 0.' },
        { field: 'not a name; DROP TABLE', message: 'x' },
      ],
    };
    const outcome = statusOutcome(400, undefined, body) as DomainError;
    expect(outcome.code).toBe('BAD_USER_INPUT');
    expect(outcome.field).toBe('amount');
    expect(outcome.details).toEqual([{ field: 'amount', message: 'The upstream service refused amount.' }]);
    expect(outcome.message).not.toContain('greater');
    expect(
      (statusOutcome(400, undefined, { statusCode: 400, message: 'x', error: 'Bad Request' }) as DomainError).field,
    ).toBe(undefined);
  });

  it("takes a 429's wait from the rate-limit body when the header is missing", () => {
    const body = { statusCode: 429, message: 'ThrottlerException: Too Many Requests', retryAfter: 9 };
    expect((statusOutcome(429, undefined, body) as DomainError).retryAfter).toBe(9);
    expect((statusOutcome(429, '3', body) as DomainError).retryAfter).toBe(3);
  });

  it('reads Retry-After as seconds or an HTTP date, at least 1', () => {
    const now = Date.parse('2026-12-02T09:00:00Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('0', now)).toBe(1);
    expect(retryAfterSeconds('Wed, 02 Dec 2026 09:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('soon', now)).toBe(1);
    expect(retryAfterSeconds(undefined, now)).toBe(1);
  });

  it('tells a send that ran out of time from one that found nobody', () => {
    expect(transportFault(new Error('aborted'), true)).toBe('timeout');
    expect(transportFault(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), false)).toBe('timeout');
    expect(transportFault(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), false)).toBe('unreachable');
  });
});
