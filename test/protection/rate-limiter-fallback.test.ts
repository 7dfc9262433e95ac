import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';

describe('rate limiter when Redis is unreachable', () => {
  it('keeps enforcing limits in this process instead of letting everything through or refusing everything', async () => {
    const errors: unknown[] = [];
    // Nothing listens on port 1: every Redis command fails at once.
    const limiter = RateLimiter.connect('redis://127.0.0.1:1', (error) => errors.push(error));
    const rule = { name: 'fallback-test', max: 3, windowMs: 60_000 };
    try {
      // The client exists (ioredis loads when a URL is given) and cannot connect.
      expect(await limiter.ready(200)).toBe(false);
      expect(limiter.redis).toBeDefined();
      const outcomes = [];
      for (let i = 0; i < 5; i++) {
        outcomes.push(
          await limiter.consume(rule, 'cred:x').then(
            () => 'ok',
            (e: { code?: string }) => e.code,
          ),
        );
      }
      expect(outcomes).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED']);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await limiter.close();
    }
  });

  it('closed before ioredis has loaded, it never makes a client', async () => {
    const early = RateLimiter.connect('redis://127.0.0.1:1', () => undefined);
    await early.close();
    expect(early.redis).toBeUndefined();
  });
});
