import { describe, expect, it } from 'vitest';
import { KeyRaceError, retryOnKeyRace } from '../../src/domain/money/key-claim.js';
import { KEY_CONSTRAINT, REFERENCE_CONSTRAINT } from '../../src/domain/money/plain-write.js';

/** A unique violation as the pg driver reports it (wrapped, as Drizzle wraps it, in a cause). */
const uniqueViolation = (constraint: string) =>
  Object.assign(new Error('query failed'), {
    cause: Object.assign(new Error('duplicate key'), { code: '23505', constraint }),
  });

/** Counts attempts; each throws the next error given, then answers. */
function attempts(...errors: unknown[]) {
  let n = 0;
  return {
    get count() {
      return n;
    },
    run: async () => {
      const error = errors[n++];
      if (error) throw error;
      return 'answered';
    },
  };
}

describe('a keyed attempt that raced a twin runs once more, and only once', () => {
  it('runs again after a KeyRaceError from its steps, and after the key index met by its one statement', async () => {
    for (const race of [new KeyRaceError(), uniqueViolation(KEY_CONSTRAINT)]) {
      const a = attempts(race);
      await expect(retryOnKeyRace(a.run)).resolves.toBe('answered');
      expect(a.count).toBe(2);
    }
  });

  it('gives up after the second race: the error reaches the caller', async () => {
    const a = attempts(new KeyRaceError(), new KeyRaceError());
    await expect(retryOnKeyRace(a.run)).rejects.toBeInstanceOf(KeyRaceError);
    expect(a.count).toBe(2);
  });

  it('never retries anything else: a taken reference or a fault fails at once', async () => {
    for (const other of [uniqueViolation(REFERENCE_CONSTRAINT), new Error('connection lost')]) {
      const a = attempts(other);
      await expect(retryOnKeyRace(a.run)).rejects.toBe(other);
      expect(a.count).toBe(1);
    }
  });
});
