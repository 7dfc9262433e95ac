import { describe, expect, it } from 'vitest';
import { hasSqlState, isLockTimeout, isUniqueViolation } from '../../src/db/sql-state.js';

describe('SQLSTATE of an error and its causes', () => {
  it('finds the state on the error or a wrapped cause (Drizzle wraps the driver error)', () => {
    const driver = Object.assign(new Error('duplicate key'), { code: '23505' });
    expect(isUniqueViolation(driver)).toBe(true);
    expect(isUniqueViolation(new Error('Failed query', { cause: driver }))).toBe(true);
    expect(isLockTimeout(new Error('Failed query', { cause: driver }))).toBe(false);
    expect(hasSqlState(undefined, '23505')).toBe(false);
  });

  it('answers, without hanging, for an error whose causes loop', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(hasSqlState(a, '23505')).toBe(false);
  });
});
