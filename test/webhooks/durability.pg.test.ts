import { and, eq, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { queryRows } from '../../src/db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import type { Services } from '../../src/services.js';
import { seedTenant, type Tenant, createTestServices } from '../helpers/app.js';
import { type Child, killChildren, spawnTs } from '../helpers/child.js';
import { onPostgres, testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { Receiver } from '../helpers/receiver.js';
import { waitUntil as until } from '../helpers/wait.js';

describe.skipIf(!onPostgres)('webhook durability across processes (PostgreSQL)', () => {
  let db: Database;
  let services: Services;
  const children: Child[] = [];
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    db = (await testDatabase()).db;
    services = await createTestServices();
  });
  afterEach(async () => {
    await killChildren(children);
    for (const receiver of receivers.splice(0)) await receiver.stop();
  });

  const worker = (env: Record<string, string> = {}) => {
    const child = spawnTs('src/main.ts', [], {
      DATABASE_URL: testDatabaseUrl(),
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
      ...env,
    });
    children.push(child);
    return child;
  };

  async function endpointFor(tenant: Tenant, receiver: Receiver) {
    const { endpoint } = await services.webhooks.create(
      {
        kind: 'api_key',
        credentialId: 'test',
        userId: tenant.user.id,
        environment: 'sandbox',
        abilities: new Set(['READ', 'MANAGE']),
      },
      { url: receiver.url, eventTypes: ['*'] },
    );
    return endpoint;
  }

  it('a worker SIGKILLed after sending and before recording: after restart the event arrives again with the same id, and nothing is lost', async () => {
    const tenant = await seedTenant(services);
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const endpoint = await endpointFor(tenant, receiver);
    const first = worker({ JOB_LEASE_MS: '3000' });
    await first.waitFor(/listening on/, 60_000);
    // The receiver takes the request, then the worker dies before it can record the answer.
    receiver.answer = () => {
      first.process.kill('SIGKILL');
      return 'hang';
    };
    const event = await recordEvent(
      db,
      { type: 'deposit.completed', userId: tenant.user.id, environment: 'sandbox', data: { reference: 'CRASH-1' } },
      new Date(),
    );
    await receiver.waitFor(1, 20_000);
    await first.exited;
    const [pending] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(pending).toMatchObject({ status: 'pending', attemptCount: 0 });

    receiver.answer = () => 200;
    const second = worker({ JOB_LEASE_MS: '3000' });
    await second.waitFor(/listening on/, 60_000);
    await receiver.waitFor(2, 20_000);
    await until(
      async () =>
        (await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id)))[0]!.status ===
        'succeeded',
      10_000,
    );
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect(receiver.received[0]!.body).toBe(receiver.received[1]!.body);
  });

  it('two worker processes deliver 1,000 events to one receiver: every event at least once, no attempt sent twice', async () => {
    const tenant = await seedTenant(services);
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const endpoint = await endpointFor(tenant, receiver);
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      await db.transaction(async (tx) => {
        for (let i = 0; i < 100; i++) {
          ids.push(
            (
              await recordEvent(
                tx,
                {
                  type: 'transaction.created',
                  userId: tenant.user.id,
                  environment: 'sandbox',
                  data: { n: batch * 100 + i },
                },
                new Date(),
              )
            ).id,
          );
        }
      });
    }
    const workers = [worker(), worker()];
    await Promise.all(workers.map((w) => w.waitFor(/listening on/, 60_000)));
    const succeeded = async () => {
      const [row] = await queryRows<{ n: string | number }>(
        db,
        sql`select count(*) as n from webhook_deliveries where endpoint_id = ${endpoint.id} and status = 'succeeded'`,
      );
      return Number(row!.n);
    };
    await until(async () => (await succeeded()) === 1000, 90_000);
    const received = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(new Set(received)).toEqual(new Set(ids));
    expect(received).toHaveLength(1000);
    const attempts = await queryRows<{ n: string | number }>(
      db,
      sql`select count(*) as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpoint.id}`,
    );
    expect(Number(attempts[0]!.n)).toBe(1000);
    const [row] = await db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, endpoint.id)));
    expect(row!.enabled).toBe(true);
  });
});
