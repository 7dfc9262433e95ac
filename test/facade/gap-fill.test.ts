import { createHmac, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAP_FILL_JOB } from '../../src/domain/facade/gap-fill.js';
import { localOwnerId } from '../../src/domain/facade/inbound-owners.js';
import { startWorkers, jobHandlersOf, type Workers } from '../../src/workers.js';
import { SpecUpstream, type SpecUser } from '../fakes/spec-upstream.js';
import { graphql, type StartedTestApp, startTestApp } from '../helpers/app.js';
import { subscribeToEvents } from '../helpers/event-subscriber.js';
import { heldJob } from '../helpers/jobs.js';
import { waitUntil, waitUntilUnchanged } from '../helpers/wait.js';

const sign = (body: string, secret: string) => createHmac('sha256', secret).update(body).digest('hex');

interface Partner {
  user: SpecUser;
  key: string;
  secret: string;
  inboundPath: string;
  inboundId: string;
}

/**
 * A facade in front of an upstream written from the spec, its workers running (relay, deliveries,
 * the gap-filling job). Each partner gives its webhook secret and a read key; the upstream holds
 * bill records whose events it never delivers, as after its retries ran out.
 */
describe('a facade’s gap-filling job: changes the upstream’s webhooks missed, found in its lists and emitted once', () => {
  let upstream: SpecUpstream;
  let facade: StartedTestApp;
  let workers: Workers;

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    facade = await startTestApp({
      listen: true,
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url, UPSTREAM_ENVIRONMENT: 'sandbox' },
    });
    workers = startWorkers(facade.t.services, facade.t.app.log);
  });

  afterAll(async () => {
    await workers?.stop(5_000);
    await facade?.t.close();
    await upstream?.stop();
  });

  const owner = (partner: Partner) => ({ userId: localOwnerId(partner.user.id), environment: 'sandbox' as const });

  async function connect(): Promise<Partner> {
    const { key, user } = upstream.addUser();
    const secret = `whsec_${randomUUID()}`;
    const answer = await graphql(
      facade.t.app,
      key,
      'mutation ($secret: String!, $readKey: String) { registerUpstreamWebhookSecret(secret: $secret, readKey: $readKey) { url readKeySet } }',
      { secret, readKey: key },
    );
    expect(answer.body.errors).toBeUndefined();
    const { url, readKeySet } = answer.body.data!.registerUpstreamWebhookSecret as { url: string; readKeySet: boolean };
    expect(readKeySet).toBe(true);
    const inboundPath = new URL(url).pathname;
    return { user, key, secret, inboundPath, inboundId: inboundPath.split('/').at(-1)! };
  }

  /** One run of the partner's job, as the runner gives it (the runner's own runs go on meanwhile). */
  const fill = async (partner: Partner) => {
    const handler = jobHandlersOf(facade.t.services).find((h) => h.kind === GAP_FILL_JOB)!;
    const job = await heldJob(facade.t.services.db, {
      payload: { inboundId: partner.inboundId },
      tenant: owner(partner).userId,
    });
    return handler.run(job);
  };

  const deliver = (partner: Partner, envelope: object) => {
    const body = JSON.stringify(envelope);
    return facade.t.app.inject({
      method: 'POST',
      url: partner.inboundPath,
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, partner.secret) },
      payload: body,
    });
  };

  /** The ids written for a record, numbered by the relay or not yet. */
  const written = async (partner: Partner, reference: string) => {
    const result = (await facade.t.services.db.execute(
      sql`select coalesce(source_id, id::text) as id from events
        where user_id = ${owner(partner).userId} and data->>'reference' = ${reference}`,
    )) as unknown as { rows: Array<{ id: string }> };
    return result.rows.map((row) => row.id);
  };

  const feed = async (partner: Partner) => {
    const { body } = await graphql(facade.t.app, partner.key, '{ events(first: 200) { events { id type data } } }');
    expect(body.errors).toBeUndefined();
    return body.data!.events.events as Array<{ id: string; type: string; data: Record<string, unknown> }>;
  };

  it('finds a bill’s outcome the upstream never delivered and streams it once; the webhook that comes later is a repeat', async () => {
    const partner = await connect();
    const subscriber = subscribeToEvents(facade.wsUrl, partner.key, { types: ['bill.payment.successful'] });
    try {
      const missed = upstream.addBill(partner.user, { status: 'SUCCESS', amount: 1500.5 });
      const pending = upstream.addBill(partner.user, { status: 'PENDING' });
      expect(await fill(partner)).toMatchObject({ status: 'retry' });
      const streamed = await subscriber.until((event) => event.data['reference'] === missed.reference);
      expect(streamed).toMatchObject({
        type: 'bill.payment.successful',
        data: {
          reference: missed.reference,
          status: 'SUCCESS',
          amount: 1500.5,
          currency: 'NGN',
          billerName: missed.billerName,
          customerId: missed.customer,
          updatedAt: missed.updatedAt,
        },
      });
      // Run again, and the upstream's own delivery of the same change arrives at last, with its id.
      expect(await fill(partner)).toMatchObject({ status: 'retry' });
      const late = await deliver(partner, {
        id: `evt_${randomUUID()}`,
        type: 'bill.payment.successful',
        created: Math.floor(Date.now() / 1000),
        data: { reference: missed.reference, status: 'SUCCESS', amount: 1500.5, currency: 'NGN' },
      });
      expect(late.statusCode).toBe(200);
      expect(late.json()).toEqual({ received: true, duplicate: true });
      await waitUntilUnchanged(() => subscriber.received.length, { quietMs: 1_500 });
      expect(subscriber.received.filter((e) => e.data['reference'] === missed.reference)).toHaveLength(1);
      const mine = (await feed(partner)).filter((e) => e.data['reference'] === missed.reference);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.id).toBe(streamed.id);
      expect(await written(partner, missed.reference)).toEqual([streamed.id]);
      // A record still pending implies no event.
      expect((await feed(partner)).filter((e) => e.data['reference'] === pending.reference)).toEqual([]);
    } finally {
      await subscriber.close();
    }
  });

  it('does not emit again what the webhook brought first, and writes only to the account whose key lists it', async () => {
    const partner = await connect();
    const other = await connect();
    const delivered = upstream.addBill(partner.user, { status: 'FAILED' });
    const id = `evt_${randomUUID()}`;
    const answer = await deliver(partner, {
      id,
      type: 'bill.payment.failed',
      created: Math.floor(Date.now() / 1000),
      data: { reference: delivered.reference, status: 'FAILED' },
    });
    expect(answer.json()).toEqual({ received: true, duplicate: false });
    await fill(partner);
    await fill(other);
    expect(await written(partner, delivered.reference)).toEqual([id]);
    expect(await written(other, delivered.reference)).toEqual([]);
  });

  it('takes two webhooks of one kind for one record with their own ids; the job’s run after them adds nothing', async () => {
    const partner = await connect();
    const first = upstream.addBill(partner.user, { status: 'FAILED' });
    const ids = [`evt_${randomUUID()}`, `evt_${randomUUID()}`];
    const answers = [];
    for (const id of ids)
      answers.push(
        await deliver(partner, {
          id,
          type: 'bill.payment.failed',
          created: Math.floor(Date.now() / 1000),
          data: { reference: first.reference, status: 'FAILED' },
        }),
      );
    // Two deliveries of one kind with two ids are two events upstream: only an `id` tells a repeat.
    expect(answers.map((answer) => answer.json())).toEqual([
      { received: true, duplicate: false },
      { received: true, duplicate: false },
    ]);
    expect((await written(partner, first.reference)).sort()).toEqual([...ids].sort());
    const log = facade.t.services.upstreamEventLog!;
    expect((await log.stateOf(owner(partner), 'bill', first.reference))!.kindsTaken).toEqual(['bill.payment.failed']);
    // The job finds the kind the webhooks brought, and writes nothing more.
    await fill(partner);
    expect((await written(partner, first.reference)).sort()).toEqual([...ids].sort());
  });

  it('records a status update older than the one known, without moving the record back', async () => {
    const partner = await connect();
    const reference = `DEP-${randomUUID()}`;
    const now = Math.floor(Date.now() / 1000);
    const completed = await deliver(partner, {
      id: `evt_${randomUUID()}`,
      type: 'deposit.completed',
      created: now,
      data: { reference, status: 'COMPLETED', amount: 5000, currency: 'NGN' },
    });
    // Delivered late: the pending update happened two minutes before the completion.
    const stale = await deliver(partner, {
      id: `evt_${randomUUID()}`,
      type: 'deposit.pending',
      created: now - 120,
      data: { reference, status: 'PENDING', amount: 5000, currency: 'NGN' },
    });
    expect([completed.json().duplicate, stale.json().duplicate]).toEqual([false, false]);
    const log = facade.t.services.upstreamEventLog!;
    expect(await log.stateOf(owner(partner), 'deposit', reference)).toMatchObject({
      kind: 'deposit.completed',
      at: new Date(now * 1000),
      kindsTaken: ['deposit.completed', 'deposit.pending'],
    });
    // Both are in the log: the stale one is recorded, as the upstream sent it.
    // Both are in the log once the relay has numbered them: the stale one is recorded, as the upstream sent it.
    const types = async () =>
      (await feed(partner))
        .filter((e) => e.data['reference'] === reference)
        .map((e) => e.type)
        .sort();
    await waitUntil(async () => (await types()).length === 2);
    expect(await types()).toEqual(['deposit.completed', 'deposit.pending']);
    // Stamped in the same second, the later kind in the lifecycle wins, whichever arrives first.
    const tie = `DEP-${randomUUID()}`;
    for (const type of ['deposit.failed', 'deposit.initiated'])
      await deliver(partner, { id: `evt_${randomUUID()}`, type, created: now, data: { reference: tie } });
    expect((await log.stateOf(owner(partner), 'deposit', tie))!.kind).toBe('deposit.failed');
    // A newer update moves it.
    const newer = `DEP-${randomUUID()}`;
    await deliver(partner, {
      id: `evt_${randomUUID()}`,
      type: 'deposit.pending',
      created: now - 60,
      data: { reference: newer },
    });
    await deliver(partner, {
      id: `evt_${randomUUID()}`,
      type: 'deposit.completed',
      created: now,
      data: { reference: newer },
    });
    expect((await log.stateOf(owner(partner), 'deposit', newer))!.kind).toBe('deposit.completed');
  });

  it('takes a read key only of the caller’s own account, and keeps none before one is given', async () => {
    const { key } = upstream.addUser();
    const { key: othersKey } = upstream.addUser();
    for (const readKey of [othersKey, 'sk_live_unknown', ' padded ']) {
      const answer = await graphql(
        facade.t.app,
        key,
        'mutation ($readKey: String) { registerUpstreamWebhookSecret(secret: "s", readKey: $readKey) { url } }',
        { readKey },
      );
      expect(answer.body.errors?.[0]?.extensions, readKey).toMatchObject({ code: 'BAD_USER_INPUT', field: 'readKey' });
    }
    const rest = await facade.t.app.inject({
      method: 'PUT',
      url: '/api/v1/facade/upstream-webhook',
      headers: { 'x-api-key': key },
      payload: { secret: 's' },
    });
    expect(rest.statusCode, rest.body).toBe(200);
    expect(rest.json().data).toMatchObject({ readKeySet: false, filledAt: null });
    const withKey = await facade.t.app.inject({
      method: 'PUT',
      url: '/api/v1/facade/upstream-webhook',
      headers: { 'x-api-key': key },
      payload: { secret: 's', readKey: key },
    });
    expect(withKey.json().data.readKeySet).toBe(true);
    // The runner runs the job queued with the key: the account's records are listed.
    await waitUntil(async () => {
      const got = await facade.t.app.inject({
        method: 'GET',
        url: '/api/v1/facade/upstream-webhook',
        headers: { 'x-api-key': key },
      });
      return got.json().data.filledAt !== null;
    });
  });
});

/**
 * In front of another Partner Gateway, the route map places the offramp orders list
 * (`GET /api/v1/offramp/ledger/transactions`): the job lists it too. The upstream runs no workers
 * and delivers no webhook, so its order's event reaches the facade only through the job.
 */
describe('a facade’s gap-filling job over the route map’s offramp orders list', () => {
  let upstream: StartedTestApp;
  let facade: StartedTestApp;

  beforeAll(async () => {
    upstream = await startTestApp({ listen: true, isolated: true });
    facade = await startTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.baseUrl, UPSTREAM_ENVIRONMENT: 'sandbox' },
    });
  });

  afterAll(async () => {
    await facade?.t.close();
    await upstream?.t.close();
  });

  it('finds an order’s status upstream and writes its event once, with the spec’s offramp data', async () => {
    const keys = upstream.tenant.keys;
    const reference = `OFF-${randomUUID().slice(0, 8)}`;
    const created = await graphql(
      upstream.t.app,
      keys.FULL_ACCESS,
      `mutation { initiateOfframpOrder(input: { token: USDC, network: base, amount: "12", fiat: NGN, reference: "${reference}",
        recipient: { institution: "ABNGNGLA", accountNumber: "0011223344", accountName: "Ngozi Eze" } }) { status fiatAmount recipient { bankName } } }`,
    );
    expect(created.body.errors).toBeUndefined();
    const order = created.body.data!.initiateOfframpOrder as {
      status: string;
      fiatAmount: string;
      recipient: { bankName: string };
    };
    const registered = await graphql(
      facade.t.app,
      keys.READ_ONLY,
      'mutation ($readKey: String) { registerUpstreamWebhookSecret(secret: "whsec_x", readKey: $readKey) { url } }',
      { readKey: keys.READ_ONLY },
    );
    expect(registered.body.errors).toBeUndefined();
    const inboundId = new URL(registered.body.data!.registerUpstreamWebhookSecret.url as string).pathname
      .split('/')
      .at(-1)!;
    const handler = jobHandlersOf(facade.t.services).find((h) => h.kind === GAP_FILL_JOB)!;
    const userId = localOwnerId(upstream.tenant.user.id);
    for (let run = 0; run < 2; run++) {
      const job = await heldJob(facade.t.services.db, { payload: { inboundId }, tenant: userId });
      expect(await handler.run(job)).toMatchObject({ status: 'retry' });
    }
    const result = (await facade.t.services.db.execute(
      // On the embedded database the upstream shares the table: its own events have no source id.
      sql`select type, data from events
        where user_id = ${userId} and data->>'reference' = ${reference} and source_id is not null`,
    )) as unknown as { rows: Array<{ type: string; data: Record<string, unknown> }> };
    expect(result.rows).toEqual([
      {
        type: 'offramp.initiated',
        data: {
          reference,
          status: order.status,
          amount: '12',
          token: 'USDC',
          network: 'base',
          fiatAmount: Number(order.fiatAmount),
          fiatCurrency: 'NGN',
          bankName: order.recipient.bankName,
          accountNumber: '0011223344',
        },
      },
    ]);
  });
});
