import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { SECRET_LOOKING, sharedSubstrings } from './secret-looking.js';

function messageOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${Object.keys(env).join(', ')}`);
}

describe('configuration errors', () => {
  it.each(Object.entries(SECRET_LOOKING))('name %s and what it must be, never its value', (name, value) => {
    const message = messageOf({ [name]: value });
    expect(message).toMatch(new RegExp(`^  ${name}: expected \\S`, 'm'));
    expect(message).not.toContain(value);
    // The message may name a URL's scheme ("scheme postgres or postgresql"); nothing after it.
    const checked = name === 'DATABASE_URL' ? value.replace(/^[a-z]+:\/\//, '') : value;
    expect(sharedSubstrings(message, checked)).toEqual([]);
  });

  it('say what SECRETS_KEY and IDEMPOTENCY_SECRET must be (their size), all bad variables at once', () => {
    const message = messageOf({ SECRETS_KEY: SECRET_LOOKING.SECRETS_KEY, IDEMPOTENCY_SECRET: 'x'.repeat(31) });
    expect(message).toMatch(/SECRETS_KEY: expected 32 bytes, base64/);
    expect(message).toMatch(/IDEMPOTENCY_SECRET: expected at least 32 characters/);
  });

  it('echo no value of any kind: numbers, choices and booleans are described, not quoted', () => {
    const env = {
      PORT: 'eighty-eighty',
      LOG_LEVEL: 'shouting',
      SEED_DEMO: 'perhaps',
      JOB_TENANT_SHARE: '1.5',
      RECON_SETTLEMENT_HOURS_BY_PROVIDER: 'flutterwave:twelve',
    };
    const message = messageOf(env);
    expect(message.split('\n').slice(1)).toEqual([
      '  PORT: expected an integer from 0 to 65535',
      '  LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent',
      '  SEED_DEMO: expected true or false',
      '  JOB_TENANT_SHARE: expected a number, more than 0 and at most 1',
      '  RECON_SETTLEMENT_HOURS_BY_PROVIDER: expected provider=hours pairs, comma-separated (flutterwave=24,paycrest=2)',
    ]);
    for (const value of Object.values(env)) expect(message).not.toContain(value);
  });
});
