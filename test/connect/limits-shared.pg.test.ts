import { randomInt } from 'node:crypto';
import { Agent, fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { createTestServices } from '../helpers/app.js';
import { spawnTs } from '../helpers/child.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { registerApp, signedInUser } from '../helpers/oauth-flow.js';

const redisUrl = process.env.REDIS_URL;

describe.skipIf(!onPostgres || !redisUrl)('Connect limits shared through Redis (PostgreSQL + Redis)', () => {
  it('refuses the 11th token request of a minute across two server processes', async () => {
    const services = await createTestServices();
    const owner = await signedInUser(services);
    const { client } = await registerApp(services, owner.user.id);
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      REDIS_URL: redisUrl!,
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      WORKERS: 'false',
      LOG_LEVEL: 'warn',
    };
    const servers = [spawnTs('src/main.ts', [], env), spawnTs('src/main.ts', [], env)];
    try {
      const urls = await Promise.all(
        servers.map(async (s) => (await s.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!),
      );
      // Redis outlives this run: a source address of its own keeps the per-IP bucket this run's alone.
      const dispatcher = new Agent({
        connect: { localAddress: `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}` },
      });
      const send = (i: number) =>
        fetch(`${urls[i % 2]}/connect/token`, {
          dispatcher,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: 'nope',
            client_id: client.clientId,
            client_secret: 'wrong',
          }),
        });
      const statuses = [];
      for (let i = 0; i < 10; i++) statuses.push((await send(i)).status);
      expect(statuses).toEqual(Array(10).fill(401));
      const eleventh = await send(10);
      expect(eleventh.status).toBe(429);
      expect(await eleventh.json()).toMatchObject({ statusCode: 429, retryAfter: expect.any(Number) });
      // And on the other process too.
      expect((await send(11)).status).toBe(429);
    } finally {
      for (const server of servers) server.process.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.exited));
    }
  });
});
