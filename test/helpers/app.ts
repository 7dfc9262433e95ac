import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { abilitiesOf, type Environment, type PermissionLevel } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { type Clock, systemClock } from '../../src/domain/clock.js';
import type { User } from '../../src/domain/users/user.js';
import type { Database } from '../../src/db/client.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { createServices, type Services } from '../../src/services.js';
import { watchRestContract } from './rest-contract.js';
import { isolatedTestDatabase, onPostgres, testDatabase } from './database.js';
import { testLogger } from './log-file.js';

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  close(): Promise<void>;
}

export async function createTestApp(
  options: { config?: Partial<Config>; clock?: Clock; isolated?: boolean | 'even-on-pglite' } = {},
): Promise<TestApp> {
  const database = options.isolated
    ? await isolatedTestDatabase({ evenOnPglite: options.isolated === 'even-on-pglite' })
    : await testDatabase();
  const config = loadConfig(
    {},
    { NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED_DEMO: false, WORKERS: false, ...options.config },
  );
  const services = createServices(config, database.db, options.clock ?? systemClock, () => undefined);
  const app = await buildApp({ services, logger: testLogger() });
  watchRestContract(app);
  await app.ready();
  return {
    app,
    services,
    close: async () => {
      await app.close();
      if ((options.isolated && onPostgres) || options.isolated === 'even-on-pglite') await database.close();
    },
  };
}

export interface StartedTestApp {
  t: TestApp;
  tenant: Tenant;
  /** http://127.0.0.1:<port>, when started with `listen` (WebSocket and browser tests). */
  baseUrl: string;
  /** ws://127.0.0.1:<port>/graphql, when started with `listen`. */
  wsUrl: string;
}

/** A test app with one seeded tenant, optionally listening on a free local port. */
export async function startTestApp(
  options: { config?: Partial<Config>; clock?: Clock; listen?: boolean; isolated?: boolean | 'even-on-pglite' } = {},
): Promise<StartedTestApp> {
  const t = await createTestApp(options);
  const tenant = await seedTenant(t.services);
  let baseUrl = '';
  if (options.listen) {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  }
  return { t, tenant, baseUrl, wsUrl: baseUrl.replace(/^http/, 'ws') + '/graphql' };
}

/**
 * Services over this worker's test database (or the one given: a throwaway server's), for tests
 * that seed or record without an app.
 */
export async function createTestServices(over?: Database): Promise<Services> {
  const db = over ?? (await testDatabase()).db;
  return createServices(
    loadConfig({}, { NODE_ENV: 'test' }),
    db,
    systemClock,
    () => undefined,
    new RateLimiter(undefined),
  );
}

export interface Tenant {
  user: User;
  /** A key per permission level, sandbox. */
  keys: Record<PermissionLevel, string>;
  /** A Full Access production key. */
  productionKey: string;
}

/** A fresh user with a key of every level, so tests never share rows. */
export async function seedTenant(services: Services): Promise<Tenant> {
  const user = await services.users.createUser({
    email: `t-${randomUUID()}@example.test`,
    firstName: 'Ada',
    lastName: 'Obi',
    phone: '+2348030000000',
  });
  const make = async (permission: PermissionLevel, environment: Environment = 'sandbox') =>
    (await services.apiKeys.create({ userId: user.id, name: `${permission} ${environment}`, environment, permission }))
      .key;
  const keys = {
    READ_ONLY: await make('READ_ONLY'),
    TRANSACTIONS: await make('TRANSACTIONS'),
    ACCOUNT_MANAGEMENT: await make('ACCOUNT_MANAGEMENT'),
    FULL_ACCESS: await make('FULL_ACCESS'),
  };
  return { user, keys, productionKey: await make('FULL_ACCESS', 'production') };
}

/** A fresh tenant's Full Access sandbox key, as the principal services are called with. */
export async function sandboxPrincipal(services: Services): Promise<Principal> {
  return {
    kind: 'api_key',
    credentialId: 'test',
    userId: (await seedTenant(services)).user.id,
    environment: 'sandbox',
    abilities: abilitiesOf('FULL_ACCESS'),
  };
}

/** POST /graphql with a key. */
export async function graphql(
  app: FastifyInstance,
  key: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
) {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    payload: { query, variables },
  });
  return {
    status: response.statusCode,
    body: response.json() as {
      data?: Record<string, any>;
      errors?: Array<{ message: string; extensions: Record<string, any> }>;
    },
  };
}
