import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { RELAY_LOCK_KEY, stampRound, stampStatement } from '../../src/domain/events/relay.js';
import { webhookStore } from '../../src/domain/webhooks/webhook-store.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { stampAll } from '../helpers/events.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

const manager = (userId: string, environment: 'sandbox' | 'production' = 'sandbox'): Principal => ({
  kind: 'api_key',
  credentialId: 'test',
  userId,
  environment,
  abilities: new Set(['READ', 'MANAGE']),
});

interface DeliveryWithJobs {
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  event_seq: unknown;
  event_created: unknown;
  jobs: Array<{
    kind: string;
    lane: string;
    tenant: string;
    concurrency_key: string;
    run_at: string;
    event_seq: unknown;
    status: string;
  }>;
}

describe('webhook fan-out by the relay', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A database of its own on PostgreSQL: no other file's relay rounds run on it meanwhile.
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  const endpoint = async (tenant: Tenant, eventTypes: string[], environment: 'sandbox' | 'production' = 'sandbox') =>
    (
      await t.services.webhooks.create(manager(tenant.user.id, environment), {
        url: `https://hooks.example.test/${randomUUID()}`,
        eventTypes,
      })
    ).endpoint.id;

  /** Every delivery to these endpoints, with its event's position and the jobs that name it. */
  const deliveriesTo = (endpointIds: string[]) =>
    queryRows<DeliveryWithJobs>(
      t.services.db,
      sql`select d.id as delivery_id, d.endpoint_id, d.event_id, e.seq as event_seq, e.created_at as event_created,
          coalesce((select json_agg(json_build_object('kind', j.kind, 'lane', j.lane, 'tenant', j.tenant,
              'concurrency_key', j.concurrency_key, 'run_at', j.run_at, 'event_seq', j.event_seq, 'status', j.status))
            from jobs j where j.payload->>'deliveryId' = d.id::text), '[]'::json) as jobs
        from webhook_deliveries d join events e on e.id = d.event_id
        where d.endpoint_id = any(${`{${endpointIds.join(',')}}`}::uuid[])
        order by e.seq, d.endpoint_id`,
    );

  it('a transfer writes only its events; the relay round writes one delivery and one job per subscribed, enabled endpoint', async () => {
    const alice = await seedTenant(t.services);
    const bob = await seedTenant(t.services);
    await fund(t, alice, 100);
    await stampAll(t.services.db);
    const every = await endpoint(alice, ['*']);
    const completed = await endpoint(alice, ['transaction.completed']);
    const otherKind = await endpoint(alice, ['payout.failed']);
    const disabled = await endpoint(alice, ['*']);
    await t.services.webhooks.update(manager(alice.user.id), disabled, { enabled: false });
    const deleted = await endpoint(alice, ['*']);
    await t.services.webhooks.remove(manager(alice.user.id), deleted);
    const production = await endpoint(alice, ['*'], 'production');
    const bobs = await endpoint(bob, ['*']);
    const all = [every, completed, otherKind, disabled, deleted, production, bobs];

    const sent = await rest(t, alice.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', {
      amount: 10,
      recipient: bob.user.id,
    });
    expect(sent.statusCode, sent.body).toBe(201);
    // Committed: the two events, unstamped, and nothing else of theirs.
    const [written] = await queryRows<{ n: unknown }>(
      t.services.db,
      sql`select count(*) as n from events
        where user_id in (${alice.user.id}, ${bob.user.id}) and type = 'transaction.completed' and seq is null`,
    );
    expect(Number(written!.n)).toBe(2);
    expect(await deliveriesTo(all)).toEqual([]);
    const [queued] = await queryRows<{ n: unknown }>(
      t.services.db,
      sql`select count(*) as n from jobs where concurrency_key = any(${`{${all.join(',')}}`}::text[])`,
    );
    expect(Number(queued!.n)).toBe(0);

    await stampAll(t.services.db);
    const fanned = await deliveriesTo(all);
    expect(fanned.map((d) => d.endpoint_id).sort()).toEqual([every, completed, bobs].sort());
    for (const delivery of fanned) {
      const owner = delivery.endpoint_id === bobs ? bob.user.id : alice.user.id;
      expect(delivery.jobs).toEqual([
        {
          kind: 'webhook.deliver',
          lane: 'webhooks',
          tenant: owner,
          concurrency_key: delivery.endpoint_id,
          run_at: expect.any(String),
          event_seq: Number(delivery.event_seq),
          status: 'pending',
        },
      ]);
      // Due when the event happened, on the operation's clock.
      expect(new Date(delivery.jobs[0]!.run_at).getTime()).toBe(
        new Date(delivery.event_created as string | Date).getTime(),
      );
    }

    // Another round finds nothing more to write.
    await stampAll(t.services.db);
    expect(await deliveriesTo(all)).toEqual(fanned);
  });

  it('goes to the endpoints as they are at fan-out: one created after the commit receives it, one disabled meanwhile does not', async () => {
    const tenant = await seedTenant(t.services);
    const before = await endpoint(tenant, ['*']);
    const event = await t.services.db.transaction((tx) =>
      recordEvent(
        tx,
        { type: 'deposit.completed', userId: tenant.user.id, environment: 'sandbox', data: {} },
        new Date(),
      ),
    );
    await t.services.webhooks.update(manager(tenant.user.id), before, { enabled: false });
    const after = await endpoint(tenant, ['deposit.completed']);
    await stampAll(t.services.db);
    const fanned = await deliveriesTo([before, after]);
    expect(fanned.map((d) => [d.event_id, d.endpoint_id])).toEqual([[event.id, after]]);
  });

  it('a round left without its fan-out says it left stamped events behind, and the next round fans them out', async () => {
    const tenant = await seedTenant(t.services);
    const hook = await endpoint(tenant, ['*']);
    await stampAll(t.services.db);
    const event = await t.services.db.transaction((tx) =>
      recordEvent(tx, { type: 'payout.failed', userId: tenant.user.id, environment: 'sandbox', data: {} }, new Date()),
    );
    const bare = await stampRound(t.services.db, { wait: true, fanOut: false });
    expect(bare).toMatchObject({ stamped: 1, fannedOut: 0, behind: true });
    expect(await deliveriesTo([hook])).toEqual([]);
    const next = await stampRound(t.services.db, { wait: true });
    expect(next).toMatchObject({ stamped: 0, fannedOut: 1, behind: false });
    expect((await deliveriesTo([hook])).map((d) => d.event_id)).toEqual([event.id]);
  });

  it('passes a gap in seq wider than a batch (a restored or edited table) instead of stopping at it', async () => {
    const tenant = await seedTenant(t.services);
    const hook = await endpoint(tenant, ['*']);
    await stampAll(t.services.db);
    // An event numbered far above the rest, as no relay numbers them: the gap is wider than a batch.
    const [far] = await queryRows<{ id: string }>(
      t.services.db,
      sql`insert into events (type, user_id, environment, data, created_at, seq)
        select 'payout.failed', ${tenant.user.id}, 'sandbox', '{}'::jsonb, now(), coalesce(max(seq), 0) + 50000
        from events returning id`,
    );
    const next = await t.services.db.transaction((tx) =>
      recordEvent(tx, { type: 'payout.failed', userId: tenant.user.id, environment: 'sandbox', data: {} }, new Date()),
    );
    await stampAll(t.services.db);
    expect((await deliveriesTo([hook])).map((d) => d.event_id)).toEqual([far!.id, next.id]);
  });

  it('fans out events a relay stamped without fanning them out, and writes no delivery twice', async () => {
    const tenant = await seedTenant(t.services);
    const hook = await endpoint(tenant, ['*']);
    const record = () =>
      t.services.db.transaction((tx) =>
        recordEvent(
          tx,
          { type: 'payout.failed', userId: tenant.user.id, environment: 'sandbox', data: {} },
          new Date(),
        ),
      );
    const plain = await record();
    // Written with its event, as a release before the relay's fan-out wrote them: a delivery and its job.
    const early = await record();
    const written = await webhookStore.insertDelivery(t.services.db, hook, early.id, new Date());
    await t.services.db.execute(
      sql`insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at)
        values ('webhook.deliver', 'webhooks', ${tenant.user.id}, ${hook}, ${JSON.stringify({ deliveryId: written.id })}::jsonb, now())`,
    );
    // A relay that only stamps (that release's): the events get their `seq` and nothing else.
    await t.services.db.transaction(async (tx) => {
      await tx.execute(
        sql.raw(`select pg_advisory_xact_lock(${RELAY_LOCK_KEY}), set_config('pgw.relay_locked', 'true', true)`),
      );
      await tx.execute(sql.raw(stampStatement(1000)));
    });
    const [stamped] = await queryRows<{ n: unknown }>(
      t.services.db,
      sql`select count(*) as n from events where id in (${plain.id}, ${early.id}) and seq is not null`,
    );
    expect(Number(stamped!.n)).toBe(2);
    expect((await deliveriesTo([hook])).map((d) => d.event_id)).toEqual([early.id]);

    // The next round fans out from its cursor: the stamped event gets its delivery, the other keeps its one.
    await stampAll(t.services.db);
    const fanned = await deliveriesTo([hook]);
    expect(fanned.map((d) => [d.event_id, d.jobs.length]).sort()).toEqual(
      [
        [plain.id, 1],
        [early.id, 1],
      ].sort(),
    );
  });
});
