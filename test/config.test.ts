import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { toBigInt, toSafeNumber } from '../src/db/columns.js';

describe('configuration', () => {
  it('has defaults that start the gateway on port 4000 with embedded PGlite', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 4000,
      PGLITE_DATA_DIR: './data/pglite',
      NODE_ENV: 'development',
      SEED_DEMO: true,
    });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('converts and validates environment strings', () => {
    expect(loadConfig({ PORT: '8080', SEED_DEMO: 'false', DATABASE_URL: 'postgres://u@h/db' })).toMatchObject({
      PORT: 8080,
      SEED_DEMO: false,
      DATABASE_URL: 'postgres://u@h/db',
    });
  });

  it('names every bad variable in one message', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/DATABASE_URL/);
    expect(message).toMatch(/LOG_LEVEL/);
  });
});

describe('integer values from either driver', () => {
  it('reads int8 given as number (PGlite) or string (node-postgres) into bigint without loss', () => {
    expect(toBigInt(5)).toBe(5n);
    expect(toBigInt('18446744073709551615')).toBe(18446744073709551615n);
    expect(toBigInt(-42n)).toBe(-42n);
    expect(() => toBigInt(2 ** 60)).toThrow(/Unsafe/);
    expect(() => toBigInt('12.5')).toThrow();
    expect(() => toBigInt(null)).toThrow();
    expect(toSafeNumber('9007199254740991')).toBe(9007199254740991);
    expect(() => toSafeNumber('9007199254740992')).toThrow();
  });
});
