import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { DomainError } from '../../src/domain/errors.js';
import { canonicalInput, fingerprintOf, Idempotency } from '../../src/domain/idempotency/idempotency.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

const TEST_KEY = Buffer.alloc(32, 7);

describe('Idempotency-Key claims', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('a request that died after recording its work is resumed, not repeated, once its lease runs out', async () => {
    const { user } = await seedTenant(t.services);
    const idempotency = new Idempotency(t.services.db, clock, TEST_KEY, 60_000);
    const scope = { userId: user.id, environment: 'sandbox' as const, operation: 'test.crash' };
    let sideEffects = 0;
    // The first attempt records its resource, then "dies" before finishing.
    await expect(
      idempotency.run(scope, 'k1', { amount: 5 }, async (claim) => {
        await t.services.db.transaction((tx) => idempotency.attach(tx, claim, 'resource-1'));
        sideEffects++;
        throw new Error('process killed');
      }),
    ).rejects.toThrow('process killed');
    // While its lease holds, a retry is told to wait.
    await expect(idempotency.run(scope, 'k1', { amount: 5 }, async () => 'again')).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    clock.advance(61_000);
    const resumed = await idempotency.run(scope, 'k1', { amount: 5 }, async (claim) => {
      expect(claim?.resourceId).toBe('resource-1');
      return `resumed ${claim?.resourceId}`;
    });
    expect(resumed).toBe('resumed resource-1');
    expect(sideEffects).toBe(1);
  });

  it('a request that died before recording anything is simply run again; a refusal is replayed', async () => {
    const { user } = await seedTenant(t.services);
    const idempotency = new Idempotency(t.services.db, clock, TEST_KEY, 60_000);
    const scope = { userId: user.id, environment: 'sandbox' as const, operation: 'test.retry' };
    await expect(idempotency.run(scope, 'k2', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(
      await idempotency.run(scope, 'k2', {}, async (claim) => (claim?.resourceId === null ? 'fresh' : 'stale')),
    ).toBe('fresh');
    await expect(
      idempotency.run(scope, 'k3', {}, async () => Promise.reject(new DomainError('INSUFFICIENT_FUNDS', 'poor'))),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    await expect(idempotency.run(scope, 'k3', {}, async () => 'rich now')).rejects.toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      message: 'poor',
    });
    await expect(idempotency.run(scope, 'k3', { other: true }, async () => 'x')).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
    // Key order does not change the request: a replay, not a 422.
    expect(await idempotency.run(scope, 'k4', { a: 1, b: 2n }, async () => ({ amount: 7n, at: new Date(0) }))).toEqual({
      amount: 7n,
      at: new Date(0),
    });
    expect(await idempotency.run(scope, 'k4', { b: 2n, a: 1 }, async () => 'second')).toEqual({
      amount: 7n,
      at: new Date(0),
    });
  });

  it('fingerprints are keyed HMACs that leave out card numbers, CVVs, PINs and OTPs', () => {
    const input = {
      reference: 'DEP-1',
      type: 'pin',
      pin: '3310',
      otp: '12345',
      card: { number: '5531886652142950', cvv: '564' },
    };
    expect(canonicalInput(input)).toBe('{"reference":"DEP-1","type":"pin"}');
    expect(canonicalInput({ CVV: '1', card_number: '2', Pin: '3', amount: 5 })).toBe('{"amount":5}');
    // Another PIN is the same request (the PIN never reaches the fingerprint)...
    expect(fingerprintOf(TEST_KEY, { ...input, pin: '0000' })).toBe(fingerprintOf(TEST_KEY, input));
    // ...and without the server's key the fingerprint cannot be recomputed.
    expect(fingerprintOf(Buffer.alloc(32, 8), input)).not.toBe(fingerprintOf(TEST_KEY, input));
    expect(fingerprintOf(TEST_KEY, input)).toMatch(/^[0-9a-f]{64}$/);
  });
});
