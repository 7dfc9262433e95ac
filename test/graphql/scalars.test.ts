import { DateTimeResolver } from 'graphql-scalars';
import { describe, expect, it } from 'vitest';
import { DateTime } from '../../src/graphql/resolvers/scalars.js';

describe('DateTime', () => {
  it('answers the text JSON made of the Date it answered before, as text', () => {
    for (const value of [
      new Date('2026-01-31T09:00:00.123Z'),
      new Date(0),
      '2026-01-31T10:00:00+01:00',
      '2026-01-31T09:00:00Z',
      1_790_000_000_000,
      Number.NaN, // graphql-scalars answers an invalid Date for it: JSON null
    ]) {
      const before = DateTimeResolver.serialize(value);
      const now = DateTime.serialize(value);
      expect(JSON.stringify({ at: now })).toBe(JSON.stringify({ at: before }));
      if (before instanceof Date && !Number.isNaN(before.getTime())) expect(typeof now).toBe('string');
    }
  });

  it('refuses what it refused, and reads input as before', () => {
    expect(() => DateTime.serialize('yesterday')).toThrow(/invalid date-time-string/);
    expect(() => DateTime.serialize(new Date(Number.NaN))).toThrow(/invalid Date instance/);
    expect(DateTime.parseValue('2026-01-31T09:00:00Z')).toEqual(new Date('2026-01-31T09:00:00Z'));
  });
});
