import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { fanOutStatement } from '../../src/domain/events/fan-out.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { RELAY_LOCK_KEY, type RelayLoop, stampStatement, startRelay } from '../../src/domain/events/relay.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant, type Tenant } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { stampAll } from '../helpers/events.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Fan-out across sessions and instances: a relay that dies mid-round, and two relays racing while
 * writers commit. The file has a database of its own, so every relay round in it is the test's.
 */
describe.skipIf(!onPostgres)('webhook fan-out across relays (PostgreSQL)', () => {
  let handle: DatabaseHandle;
  let db: Database;
  let url: string;
  let services: Services;

  beforeAll(async () => {
    url = await isolatedTestDatabaseUrl();
    handle = await openDatabase({ databaseUrl: url, poolSize: 24 });
    db = handle.db;
    services = await createTestServices(db);
  });
  afterAll(async () => {
    await handle?.close();
  });

  /** A tenant with two endpoints taking every kind. */
  async function tenantWithEndpoints(): Promise<{ tenant: Tenant; endpoints: string[] }> {
    const tenant = await seedTenant(services);
    const endpoints: string[] = [];
    for (let i = 0; i < 2; i++)
      endpoints.push(
        (
          await services.webhooks.create(
            {
              kind: 'api_key',
              credentialId: 'test',
              userId: tenant.user.id,
              environment: 'sandbox',
              abilities: new Set(['READ', 'MANAGE']),
            },
            { url: `https://hooks.example.test/${randomUUID()}`, eventTypes: ['*'] },
          )
        ).endpoint.id,
      );
    return { tenant, endpoints };
  }

  /** Per event of the tenant: its seq, its deliveries, and the jobs naming each (with their event_seq). */
  const fannedOutOf = (tenant: Tenant) =>
    queryRows<{ id: string; seq: unknown; deliveries: unknown; jobs: unknown; job_seqs: unknown[] | null }>(
      db,
      sql`select e.id, e.seq,
          (select count(*) from webhook_deliveries d where d.event_id = e.id)::int as deliveries,
          (select count(*) from jobs j join webhook_deliveries d on j.payload->>'deliveryId' = d.id::text
            where d.event_id = e.id)::int as jobs,
          (select array_agg(distinct j.event_seq) from jobs j join webhook_deliveries d on j.payload->>'deliveryId' = d.id::text
            where d.event_id = e.id) as job_seqs
        from events e where e.user_id = ${tenant.user.id} order by e.seq`,
    );

  it('a relay that dies after its fan-out and before its commit leaves nothing; the next round writes each delivery once', async () => {
    const { tenant } = await tenantWithEndpoints();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await db.transaction((tx) =>
            recordEvent(
              tx,
              { type: 'deposit.completed', userId: tenant.user.id, environment: 'sandbox', data: { i } },
              new Date(),
            ),
          )
        ).id,
      );

    // A relay's round, by hand in a session of its own: the lock, the stamp and the fan-out done, no commit yet.
    const session = new pg.Client({ connectionString: url });
    session.on('error', () => undefined);
    await session.connect();
    const { rows } = await session.query<{ pid: number }>('select pg_backend_pid() as pid');
    await session.query(
      [
        'begin isolation level read committed',
        `select pg_advisory_xact_lock(${RELAY_LOCK_KEY}), set_config('pgw.relay_locked', 'true', true)`,
        stampStatement(1000),
        fanOutStatement(1000),
      ].join(';\n'),
    );
    const [inSession] = (
      await session.query<{ n: number }>(
        `select count(*)::int as n from webhook_deliveries where event_id = any($1::uuid[])`,
        [ids],
      )
    ).rows;
    expect(inSession!.n).toBe(6);
    // Nobody else sees any of it.
    expect((await fannedOutOf(tenant)).map((e) => [e.seq, e.deliveries])).toEqual([
      [null, 0],
      [null, 0],
      [null, 0],
    ]);

    // Its process dies: the server ends the session, and the open transaction with it.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    await admin.end();
    await session.end().catch(() => undefined);

    // The next relay round redoes the batch: stamped once, each event to both endpoints once, a job each.
    await stampAll(db);
    const after = await fannedOutOf(tenant);
    expect(after.map((e) => e.id).sort()).toEqual([...ids].sort());
    for (const event of after) {
      expect(event.seq).not.toBeNull();
      expect(event).toMatchObject({ deliveries: 2, jobs: 2 });
      expect(event.job_seqs!.map(Number)).toEqual([Number(event.seq)]);
    }
  });

  it('two relays racing while writers commit: every event fanned out, none twice, each job carrying its seq', async () => {
    const { tenant } = await tenantWithEndpoints();
    const relays: RelayLoop[] = [];
    let expected = 0;
    try {
      // Small batches, so fan-out runs behind the stamps and both relays take turns at the lock.
      for (let r = 0; r < 2; r++) relays.push(startRelay(db, { batchSize: 3, idleMs: 20, busyMs: 2 }));
      const writers = Array.from({ length: 6 }, (_, w) =>
        (async () => {
          for (let o = 0; o < 10; o++) {
            const size = 1 + Math.floor(Math.random() * 4);
            expected += size;
            await db.transaction(async (tx) => {
              for (let i = 0; i < size; i++) {
                await recordEvent(
                  tx,
                  { type: 'transaction.created', userId: tenant.user.id, environment: 'sandbox', data: { w, o, i } },
                  new Date(),
                );
                // Server-side jitter, so transactions commit out of the order of their ids.
                await tx.execute(sql`select pg_sleep(${Math.random() * 0.004})`);
              }
            });
          }
        })(),
      );
      await Promise.all(writers);
      await waitUntil(async () => {
        const [row] = await queryRows<{ done: boolean }>(
          db,
          sql`select not exists (select 1 from events where seq is null)
            and (select seq from event_fan_out where id = 1) = (select max(seq) from events) as done`,
        );
        return row!.done === true;
      }, 60_000);
    } finally {
      for (const relay of relays) await relay.stop();
    }
    const events = await fannedOutOf(tenant);
    expect(events).toHaveLength(expected);
    for (const event of events) {
      expect(event).toMatchObject({ deliveries: 2, jobs: 2 });
      expect(event.job_seqs!.map(Number)).toEqual([Number(event.seq)]);
    }
  });
});
