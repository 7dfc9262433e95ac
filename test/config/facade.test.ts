import { MATCH_JOB } from '../../src/domain/facade/facade-keys.js';
import { GAP_FILL_JOB } from '../../src/domain/facade/gap-fill.js';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createServices } from '../../src/services.js';
import { systemClock } from '../../src/domain/clock.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { UserService } from '../../src/domain/users/user-service.js';
import { UpstreamUserDirectory } from '../../src/domain/facade/upstream-user-directory.js';
import { jobHandlersOf } from '../../src/workers.js';
import { RETENTION_JOB } from '../../src/domain/retention/retention-jobs.js';
import { DELIVERY_JOB } from '../../src/domain/webhooks/webhook.js';
import { testDatabase } from '../helpers/database.js';

const PRODUCTION = { NODE_ENV: 'production', SECRETS_KEY: randomBytes(32).toString('base64') };

function problemOf(env: Record<string, string>): string | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

describe('facade settings', () => {
  it('is service mode unless told otherwise', () => {
    const config = loadConfig({});
    expect(config.GATEWAY_MODE).toBe('service');
    expect(config.UPSTREAM_URL).toBeUndefined();
  });

  it('refuses facade mode without UPSTREAM_URL, naming it', () => {
    expect(problemOf({ GATEWAY_MODE: 'facade' })).toMatch(/^ {2}UPSTREAM_URL: required with GATEWAY_MODE=facade/m);
  });

  it('refuses a malformed UPSTREAM_URL, naming the variable and never its value', () => {
    const message = problemOf({ GATEWAY_MODE: 'facade', UPSTREAM_URL: 'upstream.example.com/sekrit' });
    expect(message).toMatch(/UPSTREAM_URL: expected a URL with scheme http or https/);
    expect(message).not.toContain('sekrit');
    expect(problemOf({ GATEWAY_MODE: 'facade', UPSTREAM_URL: 'https://up.example.com/?k=sekrit' })).toMatch(
      /UPSTREAM_URL: expected a base URL without query/,
    );
  });

  it('refuses an unknown mode', () => {
    expect(problemOf({ GATEWAY_MODE: 'proxy' })).toMatch(/GATEWAY_MODE: expected one of service, facade/);
  });

  it('in production refuses private, loopback and link-local upstreams unless UPSTREAM_PRIVATE_ADDRESSES=true', () => {
    for (const url of [
      'https://127.0.0.1:8443',
      'https://10.1.2.3',
      'https://169.254.169.254',
      'https://[::1]:8443',
      'https://localhost',
      'https://payments.internal',
    ]) {
      const env = { ...PRODUCTION, GATEWAY_MODE: 'facade', UPSTREAM_URL: url };
      expect(problemOf(env), url).toMatch(/UPSTREAM_URL: names a private, loopback or link-local host/);
      expect(problemOf({ ...env, UPSTREAM_PRIVATE_ADDRESSES: 'true' }), url).toBeUndefined();
    }
    expect(
      problemOf({ ...PRODUCTION, GATEWAY_MODE: 'facade', UPSTREAM_URL: 'https://api.partner.example' }),
    ).toBeUndefined();
  });

  it('in production wants https, since every request carries a partner key', () => {
    const env = { ...PRODUCTION, GATEWAY_MODE: 'facade', UPSTREAM_URL: 'http://api.partner.example' };
    expect(problemOf(env)).toMatch(/UPSTREAM_URL: expected https in production/);
    expect(problemOf({ ...env, UPSTREAM_PRIVATE_ADDRESSES: 'true' })).toBeUndefined();
  });

  it('allows local upstreams outside production, and seeds no demo user in facade mode', () => {
    const config = loadConfig({ GATEWAY_MODE: 'facade', UPSTREAM_URL: 'http://127.0.0.1:4100' });
    expect(config.UPSTREAM_PRIVATE_ADDRESSES).toBe(true);
    expect(config.SEED_DEMO).toBe(false);
    expect(problemOf({ GATEWAY_MODE: 'facade', UPSTREAM_URL: 'http://127.0.0.1:4100', SEED_DEMO: 'true' })).toMatch(
      /SEED_DEMO: may not be on with GATEWAY_MODE=facade/,
    );
  });
});

describe('what a facade starts', () => {
  const servicesOf = async (env: Record<string, string>) =>
    createServices(
      loadConfig(env, { NODE_ENV: 'test', LOG_LEVEL: 'silent' }),
      (await testDatabase()).db,
      systemClock,
      () => undefined,
      new RateLimiter(undefined),
    );

  it('binds the user domain to the upstream, and the service to its own users', async () => {
    const facade = await servicesOf({ GATEWAY_MODE: 'facade', UPSTREAM_URL: 'http://127.0.0.1:4100' });
    const service = await servicesOf({});
    expect(facade.userDirectory).toBeInstanceOf(UpstreamUserDirectory);
    expect(facade.upstream?.settings).toEqual({
      baseUrl: 'http://127.0.0.1:4100',
      timeoutMs: 15_000,
      privateAddresses: true,
    });
    expect(service.userDirectory).toBeInstanceOf(UserService);
    expect(service.upstream).toBeUndefined();
  });

  it("runs none of the faced domains' jobs: only webhook deliveries, pruning of its own tables, its matcher and gap-filling", async () => {
    const facade = await servicesOf({ GATEWAY_MODE: 'facade', UPSTREAM_URL: 'http://127.0.0.1:4100' });
    const service = await servicesOf({});
    const facadeKinds = jobHandlersOf(facade).map((h) => h.kind);
    const serviceKinds = jobHandlersOf(service).map((h) => h.kind);
    expect(facadeKinds.sort()).toEqual([RETENTION_JOB, DELIVERY_JOB, MATCH_JOB, GAP_FILL_JOB].sort());
    // Service mode runs the domains' jobs (bills, deposits, payouts, offramp, chains, ledger, reconciliation) as well.
    expect(serviceKinds.length).toBeGreaterThan(facadeKinds.length + 5);
    // The matcher of a facade's own mutations and its gap-filling are the kinds a service has no use for.
    const facadeOnly = [MATCH_JOB, GAP_FILL_JOB];
    expect(serviceKinds).toEqual(expect.arrayContaining(facadeKinds.filter((kind) => !facadeOnly.includes(kind))));
    for (const kind of facadeOnly) expect(serviceKinds).not.toContain(kind);
  });
});
