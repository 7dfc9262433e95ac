import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { exhaustedCheckouts } from '../../src/db/pool-exhaustion.js';
import type { RoutedPool } from '../../src/db/pool-routing.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { testLogger } from '../helpers/log-file.js';
import { MetricsText } from '../helpers/metrics-text.js';
import { rest } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * A request pool of one connection, a checkout waiting at most 300 ms, and that one connection
 * taken: requests are answered 503 BUSY with Retry-After (never "its database cannot be reached"),
 * each give-up is counted in gateway_db_pool_exhausted_total, and readiness keeps the database up.
 * With the connection back, the same request is served.
 */
describe.skipIf(!onPostgres)('an exhausted pool (PostgreSQL)', () => {
  let database: DatabaseHandle;
  let t: TestApp;
  let pool: pg.Pool;
  let tenant: Tenant;

  beforeAll(async () => {
    // Migrated first with the default wait for a connection: a new backend on a busy host can take
    // longer than the 300 ms this pool is given, and the setup is not what is measured.
    const url = await isolatedTestDatabaseUrl();
    await (await openDatabase({ databaseUrl: url, poolSize: 1 })).close();
    database = await openDatabase({ databaseUrl: url, poolSize: 1, connectTimeoutMs: 300, migrate: false });
    const services = createServices(
      loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED_DEMO: false, WORKERS: false, API_KEY_CACHE_MS: 0 }),
      database.db,
      systemClock,
      () => undefined,
    );
    const app = await buildApp({ services, logger: testLogger() });
    await app.ready();
    t = { app, services, close: async () => undefined };
    pool = (database.pool as RoutedPool).named().find((p) => p.name === 'request')!.pool;
    tenant = await seedTenant(services);
  });
  afterAll(async () => {
    await t?.app.close();
    await database?.close();
  });

  it('answers 503 BUSY with Retry-After, counts it, and keeps readiness up; served again once a connection is free', async () => {
    const call = rest(t, tenant.keys.READ_ONLY);
    expect((await call('GET', '/api/v1/wallet/balance')).statusCode).toBe(200);
    const before = exhaustedCheckouts(pool);
    const taken = await pool.connect();
    let released = false;
    try {
      const refused = await call('GET', '/api/v1/wallet/balance');
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable', errorCode: 'BUSY' });
      expect(refused.json().message).toMatch(/at capacity/);
      expect(refused.json().message).not.toMatch(/cannot be reached/);
      expect(exhaustedCheckouts(pool)).toBeGreaterThan(before);
      // The readiness check itself finds no connection either: that is load, not an outage.
      await t.services.health.checkDatabase();
      expect(t.services.health.databaseState).toBe('up');
      taken.release();
      released = true;
      await waitUntil(() => pool.idleCount === 1);
      expect((await call('GET', '/api/v1/wallet/balance')).statusCode).toBe(200);
      expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(200);
      // Scraped once the pool has room (the scrape's own queries need it): every give-up so far.
      const metrics = MetricsText.parse(await t.app.metricsText());
      expect(metrics.sum('gateway_db_pool_exhausted_total', { pool: 'request' })).toBe(exhaustedCheckouts(pool));
      expect(exhaustedCheckouts(pool)).toBeGreaterThan(before);
    } finally {
      if (!released) taken.release();
    }
  });
});
