import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The message loadConfig throws for `env`, or undefined when it accepts it. */
function problemOf(env: Record<string, string>): string | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

/**
 * The gateway environment of compose.yaml (the `&gateway-env` block), with `${NAME:-default}`
 * given its default and `${NAME:?…}` (required from the shell) a value of the kind it asks for.
 */
function composeEnvironment(required: Record<string, string>): Record<string, string> {
  const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
  const block = /environment: &gateway-env\n((?: {4}.*\n)+)/.exec(compose)?.[1];
  expect(block, 'compose.yaml has an &gateway-env block').toBeDefined();
  const env: Record<string, string> = {};
  for (const line of block!.split('\n')) {
    const entry = /^ {4}([A-Z0-9_]+): (.*)$/.exec(line);
    if (!entry) continue;
    const [, name, raw] = entry as unknown as [string, string, string];
    const unquoted = raw.replace(/^"(.*)"$/, '$1');
    env[name] = unquoted.replace(/\$\{(\w+):([-?])([^}]*)\}/g, (_all, variable: string, how: string, rest: string) => {
      if (how === '-') return rest;
      expect(required, `a value for ${variable}, which compose.yaml requires`).toHaveProperty(variable);
      return required[variable]!;
    });
  }
  return env;
}

/** Every URL-valued variable, with its kind's schemes. */
const HTTP = [
  'PUBLIC_URL',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'FLUTTERWAVE_BASE_URL',
  'FLUTTERWAVE_TOKEN_URL',
  'FLUTTERWAVE_V3_BASE_URL',
  'PAYCREST_BASE_URL',
  'SOLANA_RPC_URL_MAINNET_BETA',
  'SOLANA_RPC_URL_DEVNET',
  'SOLANA_RPC_URL_TESTNET',
  'JUPITER_BASE_URL',
  'JUPITER_PRICE_URL',
];
const POSTGRES = ['DATABASE_URL', 'DATABASE_MIGRATION_URL'];

describe('URL-valued configuration', () => {
  it('accepts PUBLIC_URL=https://gw.example.com (an unknown TypeBox format once refused every value)', () => {
    expect(problemOf({ PUBLIC_URL: 'https://gw.example.com' })).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: 'https://gw.example.com/partner/' }).PUBLIC_URL).toBe(
      'https://gw.example.com/partner/',
    );
  });

  it("accepts compose.yaml's gateway environment as it is, and with a tracing collector", () => {
    const required = { SECRETS_KEY: randomBytes(32).toString('base64') };
    const env = composeEnvironment(required);
    expect(env).toMatchObject({ PUBLIC_URL: 'http://localhost:8080', REDIS_URL: 'redis://redis:6379' });
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\//);
    expect(problemOf(env)).toBeUndefined();
    expect(problemOf({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' })).toBeUndefined();
    expect(problemOf({ ...env, PUBLIC_URL: 'https://gw.example.com' })).toBeUndefined();
  });

  it('accepts each kind of URL in the forms its client reads', () => {
    for (const name of HTTP) {
      for (const value of [
        'https://api.example.com',
        'http://127.0.0.1:4318/v1/traces',
        'https://rpc.example.com/?api-key=x',
      ])
        expect(problemOf({ [name]: value }), `${name}=${value}`).toBeUndefined();
    }
    for (const name of POSTGRES) {
      for (const value of [
        'postgres://u:p@db:5432/gateway',
        'postgresql://u@[::1]/db?sslmode=require',
        'postgres://u@db1:5432,db2:5433/gateway?target_session_attrs=read-write',
        'postgres:///gateway?host=/var/run/postgresql',
      ])
        expect(problemOf({ [name]: value }), `${name}=${value}`).toBeUndefined();
    }
    for (const value of ['redis://redis:6379', 'rediss://:pw@cache.example.com:6380/0'])
      expect(problemOf({ REDIS_URL: value }), value).toBeUndefined();
    for (const value of ['smtp://user:pass@smtp.example.com:587', 'smtps://smtp.example.com'])
      expect(problemOf({ SMTP_URL: value }), value).toBeUndefined();
  });

  it('refuses a value that is not a URL of the kind, naming the variable and the schemes', () => {
    const bad: Record<string, string[]> = {
      http: ['https://', 'http://exa mple.com', 'ftp://files.example.com', 'gw.example.com', 'https:gw.example.com'],
      postgres: ['mysql://db/x', 'postgres://u@db:99999/x', 'postgres://u@db1,db 2/x', 'postgres:gateway'],
      redis: ['http://redis:6379', 'redis://', 'redis:6379'],
      smtp: ['smtp://user:pass@host:70000', 'smtp:/host', 'mail.example.com:587'],
    };
    const cases = [
      ...HTTP.flatMap((name) => bad.http!.map((value) => [name, value, /scheme http or https/] as const)),
      ...POSTGRES.flatMap((name) => bad.postgres!.map((value) => [name, value, /PostgreSQL URL/] as const)),
      ...bad.redis!.map((value) => ['REDIS_URL', value, /scheme redis or rediss/] as const),
      ...bad.smtp!.map((value) => ['SMTP_URL', value, /scheme smtp or smtps/] as const),
    ];
    for (const [name, value, expected] of cases) {
      const message = problemOf({ [name]: value });
      expect(message, `${name}=${value}`).toMatch(new RegExp(`^  ${name}: expected`, 'm'));
      expect(message).toMatch(expected);
      expect(message).not.toContain(value);
    }
  });
});
