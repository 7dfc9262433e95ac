import { describe, expect, it } from 'vitest';
import { seedTenant, createTestServices } from '../helpers/app.js';
import { spawnTs } from '../helpers/child.js';
import { onPostgres, testDatabase, testDatabaseUrl } from '../helpers/database.js';

const redisUrl = process.env.REDIS_URL;

describe.skipIf(!onPostgres || !redisUrl)('rate limits shared through Redis (PostgreSQL + Redis)', () => {
  it('50 concurrent requests spread over two server processes with a limit of 10 let exactly 10 through', async () => {
    await testDatabase();
    const services = await createTestServices();
    const tenant = await seedTenant(services);
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      REDIS_URL: redisUrl!,
      RATE_LIMIT_PER_MINUTE: '10',
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
    };
    const servers = [spawnTs('src/main.ts', [], env), spawnTs('src/main.ts', [], env)];
    try {
      const urls = await Promise.all(
        servers.map(async (s) => (await s.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!),
      );
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${urls[i % 2]}/api/v1/user/me`, { headers: { 'x-api-key': tenant.keys.READ_ONLY } }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40);
      const perServer = [0, 1].map((n) => statuses.filter((s, i) => i % 2 === n && s === 200).length);
      expect(perServer[0]! + perServer[1]!).toBe(10);
    } finally {
      for (const server of servers) server.process.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.exited));
    }
  });
});
