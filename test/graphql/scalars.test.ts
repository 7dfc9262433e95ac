import { DateTimeResolver } from 'graphql-scalars';
import { describe, expect, it } from 'vitest';
import { isoDateTime } from '../../src/graphql/resolvers/iso-date-time.js';
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

describe('isoDateTime', () => {
  it("writes Date#toISOString's text for every date, leap days and the ends of its range included", () => {
    const edges = [
      -62_167_219_200_000, // 0000-01-01T00:00:00.000Z
      -62_167_219_200_001, // the last millisecond of year -1: +six digits, left to toISOString
      253_402_300_799_999, // 9999-12-31T23:59:59.999Z
      253_402_300_800_000, // +010000-01-01
      8.64e15, // the last valid time value
      -8.64e15,
      0,
      -1,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2100, 2, 1),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      Date.UTC(1969, 11, 31, 12),
    ];
    for (const time of edges) expect(isoDateTime(new Date(time))).toBe(new Date(time).toISOString());
    // A fixed pseudo-random walk over the whole valid range, and over the years the database holds.
    let seed = 12345;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let i = 0; i < 200_000; i++) {
      const time = Math.round(
        i % 2
          ? (next() * 2 - 1) * 8.64e15
          : Date.UTC(1900, 0, 1) + next() * (Date.UTC(2200, 0, 1) - Date.UTC(1900, 0, 1)),
      );
      const date = new Date(time);
      if (isoDateTime(date) !== date.toISOString()) expect(isoDateTime(date)).toBe(date.toISOString());
    }
  });

  it('throws for an invalid date, as toISOString does', () => {
    expect(() => isoDateTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
