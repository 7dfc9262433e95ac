import { createClient } from 'graphql-ws';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { seedTenant, createTestServices } from '../helpers/app.js';
import { type Child, spawnTs } from '../helpers/child.js';
import { onPostgres, testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

const redisUrl = process.env.REDIS_URL;

describe.skipIf(!onPostgres || !redisUrl)('subscriptions across server processes (PostgreSQL + Redis)', () => {
  const children: Child[] = [];
  afterAll(async () => {
    for (const child of children) child.process.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
  });

  it('a subscriber on one server receives events caused through another', async () => {
    await testDatabase();
    const services = await createTestServices();
    const tenant = await seedTenant(services);
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      REDIS_URL: redisUrl!,
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
    };
    children.push(spawnTs('src/main.ts', [], env), spawnTs('src/main.ts', [], env));
    const [a, b] = await Promise.all(
      children.map(async (c) => (await c.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!),
    );

    const received: string[] = [];
    const client = createClient({
      url: `${a!.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { apiKey: tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    client.subscribe<{ events: { type: string } }>(
      { query: 'subscription { events(after: 0) { type } }' },
      { next: (m) => m.data && received.push(m.data.events.type), error: () => undefined, complete: () => undefined },
    );

    // The event is caused through server B: a test webhook records a webhook.test event there.
    const receiver = await new Receiver().start();
    const headers = { 'x-api-key': tenant.keys.FULL_ACCESS, 'content-type': 'application/json' };
    const created = await fetch(`${b}/api/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url }),
    });
    const endpointId = ((await created.json()) as { data: { endpoint: { id: string } } }).data.endpoint.id;
    const started = Date.now();
    expect((await fetch(`${b}/api/v1/webhooks/${endpointId}/test`, { method: 'POST', headers })).status).toBe(202);
    await waitUntil(() => received.includes('webhook.test'), 10_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    await receiver.waitFor(1);
    await client.dispose();
    await receiver.stop();
  });
});
