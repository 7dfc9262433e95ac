import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices, type Services } from '../../src/services.js';
import { startWorkers, type Workers } from '../../src/workers.js';
import { graphql, type StartedTestApp, seedTenant, startTestApp, type Tenant } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { type StreamedEvent, subscribeToEvents } from '../helpers/event-subscriber.js';
import { testLogger } from '../helpers/log-file.js';
import { Receiver } from '../helpers/receiver.js';
import { freePort } from '../helpers/throwaway-servers.js';
import { waitUntil, waitUntilUnchanged } from '../helpers/wait.js';

interface Facade {
  app: FastifyInstance;
  services: Services;
  wsUrl: string;
  stop(): Promise<void>;
}

/**
 * A facade as deployed: its own database (the upstream's is another), listening at PUBLIC_URL,
 * with its workers (relay and webhook deliveries) running; in front of a development upstream, so
 * its callers act in the sandbox and local receivers are allowed.
 */
async function startFacade(database: DatabaseHandle, upstreamUrl: string, port: number): Promise<Facade> {
  const config = loadConfig(
    {},
    {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      SEED_DEMO: false,
      WORKERS: false,
      GATEWAY_MODE: 'facade',
      UPSTREAM_URL: upstreamUrl,
      UPSTREAM_ENVIRONMENT: 'sandbox',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    },
  );
  const services = createServices(config, database.db, systemClock, () => undefined);
  const app = await buildApp({ services, logger: testLogger() });
  await app.listen({ port, host: '127.0.0.1' });
  const workers: Workers = startWorkers(services, app.log);
  return {
    app,
    services,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    stop: async () => {
      await workers.stop(5_000);
      await app.close();
    },
  };
}

const sign = (body: string, secret: string) => createHmac('sha256', secret).update(body).digest('hex');

interface Partner {
  tenant: Tenant;
  key: string;
  /** The facade's inbound URL for this account, as registered upstream. */
  inboundUrl: string;
  /** The upstream's webhook secret for this account. */
  upstreamSecret: string;
  /** The partner's own receiver of the facade's webhooks, and the secret they are signed with. */
  receiver: Receiver;
  facadeSecret: string;
}

/**
 * The upstream is this gateway in service mode (its own database, workers running): it signs its
 * webhooks with `x-service-signature` as the spec says. In front of it, a facade on a database of
 * its own. Each partner account registers the facade's inbound URL upstream, gives the facade the
 * secret the upstream showed, and registers its own receiver with the facade.
 */
describe('a facade: each partner account’s upstream events, verified, stored once, streamed and re-delivered', () => {
  let upstream: StartedTestApp;
  let upstreamWorkers: Workers;
  let facadeDatabase: DatabaseHandle;
  let facadePort: number;
  let facade: Facade;
  let a: Partner;
  let b: Partner;

  const inbound = (partner: Partner, body: string, signature: string | undefined) =>
    facade.app.inject({
      method: 'POST',
      url: new URL(partner.inboundUrl).pathname,
      headers: { 'content-type': 'application/json', ...(signature ? { 'x-service-signature': signature } : {}) },
      payload: body,
    });

  /** The partner's events as the facade's feed gives them. */
  const feed = async (partner: Partner) => {
    const { body } = await graphql(facade.app, partner.key, '{ events(first: 200) { events { id type seq } } }');
    expect(body.errors).toBeUndefined();
    return body.data!.events.events as Array<{ id: string; type: string; seq: number }>;
  };

  /** The event ids the partner's receiver got, each checked against the facade's signature. */
  const delivered = (partner: Partner) =>
    partner.receiver.received.map((r) => {
      expect(r.headers['x-service-signature']).toBe(sign(r.body, partner.facadeSecret));
      return (JSON.parse(r.body) as { id: string }).id;
    });

  /** Set-up as docs/facade.md gives it: on GraphQL, or (`rest`) on the facade's REST routes. */
  async function connect(over: 'graphql' | 'rest'): Promise<Partner> {
    const tenant = await seedTenant(upstream.t.services);
    const key = tenant.keys.FULL_ACCESS;
    const rest = (method: 'GET' | 'PUT', payload?: object) =>
      facade.app.inject({ method, url: '/api/v1/facade/upstream-webhook', headers: { 'x-api-key': key }, payload });
    let before: { url: string; secretSetAt: string | null };
    if (over === 'rest') {
      const response = await rest('GET');
      expect(response.statusCode).toBe(200);
      before = response.json().data;
    } else {
      const response = await graphql(facade.app, key, '{ upstreamWebhookReceiver { url secretSetAt } }');
      expect(response.body.errors).toBeUndefined();
      before = response.body.data!.upstreamWebhookReceiver;
    }
    const { url: inboundUrl, secretSetAt } = before;
    expect(secretSetAt).toBeNull();
    const upstreamEndpoint = await graphql(
      upstream.t.app,
      key,
      'mutation ($url: String!) { createWebhookEndpoint(input: { url: $url }) { secret } }',
      { url: inboundUrl },
    );
    expect(upstreamEndpoint.body.errors).toBeUndefined();
    const upstreamSecret = upstreamEndpoint.body.data!.createWebhookEndpoint.secret as string;
    let registered: { url: string; secretSetAt: string | null };
    if (over === 'rest') {
      const response = await rest('PUT', { secret: upstreamSecret });
      expect(response.statusCode, response.body).toBe(200);
      registered = response.json().data;
      expect((await rest('GET')).json().data).toEqual(registered);
    } else {
      const response = await graphql(
        facade.app,
        key,
        'mutation ($secret: String!) { registerUpstreamWebhookSecret(secret: $secret) { url secretSetAt } }',
        { secret: upstreamSecret },
      );
      expect(response.body.errors).toBeUndefined();
      registered = response.body.data!.registerUpstreamWebhookSecret;
    }
    expect(registered.url).toBe(inboundUrl);
    expect(registered.secretSetAt).not.toBeNull();
    const receiver = await new Receiver().start();
    const own = await graphql(
      facade.app,
      key,
      'mutation ($url: String!) { createWebhookEndpoint(input: { url: $url }) { secret } }',
      { url: receiver.url },
    );
    expect(own.body.errors).toBeUndefined();
    return {
      tenant,
      key,
      inboundUrl,
      upstreamSecret,
      receiver,
      facadeSecret: own.body.data!.createWebhookEndpoint.secret,
    };
  }

  beforeAll(async () => {
    upstream = await startTestApp({ listen: true, isolated: true });
    upstreamWorkers = startWorkers(upstream.t.services, upstream.t.app.log);
    facadeDatabase = onPostgres
      ? await openDatabase({ databaseUrl: await isolatedTestDatabaseUrl(), poolSize: 10 })
      : await openDatabase({ pgliteDataDir: 'memory://' });
    facadePort = await freePort();
    facade = await startFacade(facadeDatabase, upstream.baseUrl, facadePort);
    a = await connect('graphql');
    b = await connect('rest');
  });

  afterAll(async () => {
    await facade?.stop();
    await upstreamWorkers?.stop(5_000);
    await Promise.all([a?.receiver.stop(), b?.receiver.stop()]);
    await upstream?.t.close();
    await facadeDatabase?.close();
  });

  it('streams an event caused upstream to that account’s subscriber and receiver once, with the upstream’s id, and to no other account', async () => {
    const subscriberA = subscribeToEvents(facade.wsUrl, a.key);
    const subscriberB = subscribeToEvents(facade.wsUrl, b.key);
    try {
      const triggered = await graphql(
        upstream.t.app,
        a.tenant.keys.TRANSACTIONS,
        'mutation { triggerSandboxEvent(type: "bill.payment.successful") { eventId events { id type } } }',
      );
      expect(triggered.body.errors).toBeUndefined();
      const { eventId, events: caused } = triggered.body.data!.triggerSandboxEvent as {
        eventId: string;
        events: Array<{ id: string; type: string }>;
      };
      const streamed = await subscriberA.until((event) => event.id === eventId);
      expect(streamed.type).toBe('bill.payment.successful');
      await waitUntil(() => delivered(a).includes(eventId));
      // Every event the operation caused arrives, each once: wait until nothing more comes.
      await waitUntil(() => caused.every(({ id }) => delivered(a).includes(id)));
      await waitUntilUnchanged(() => a.receiver.received.length + subscriberA.received.length, { quietMs: 1_500 });
      const ids = caused.map(({ id }) => id).sort();
      expect(
        delivered(a)
          .filter((id) => ids.includes(id))
          .sort(),
      ).toEqual(ids);
      expect(
        subscriberA.received
          .map((e) => e.id)
          .filter((id) => ids.includes(id))
          .sort(),
      ).toEqual(ids);
      // The upstream's envelope as it sent it: same id, kind and data.
      const upstreamEvent = await graphql(
        upstream.t.app,
        a.tenant.keys.READ_ONLY,
        'query ($id: ID!) { event(id: $id) { id type created data } }',
        { id: eventId },
      );
      const received = JSON.parse(a.receiver.received.find((r) => JSON.parse(r.body).id === eventId)!.body);
      expect(received).toEqual(upstreamEvent.body.data!.event);
      expect({ ...streamed, seq: undefined }).toEqual({ ...upstreamEvent.body.data!.event, seq: undefined });
      // The other account saw none of it.
      expect(delivered(b).filter((id) => ids.includes(id))).toEqual([]);
      expect(subscriberB.received.filter((e) => ids.includes(e.id))).toEqual([]);
      expect((await feed(b)).filter((e) => ids.includes(e.id))).toEqual([]);
    } finally {
      await Promise.all([subscriberA.close(), subscriberB.close()]);
    }
  });

  it('refuses a tampered or unsigned delivery with 401 and stores nothing', async () => {
    const body = JSON.stringify({
      id: `evt_${randomUUID()}`,
      type: 'deposit.completed',
      created: Math.floor(Date.now() / 1000),
      data: { reference: 'DEP-1', status: 'COMPLETED', amount: 5000, currency: 'NGN' },
    });
    const tampered = body.replace('5000', '5000000');
    const before = (await feed(a)).length;
    for (const [label, response] of [
      ['tampered body', await inbound(a, tampered, sign(body, a.upstreamSecret))],
      ['another account’s secret', await inbound(a, body, sign(body, b.upstreamSecret))],
      ['no signature', await inbound(a, body, undefined)],
      ['not hex', await inbound(a, body, 'z'.repeat(64))],
    ] as const) {
      expect(response.statusCode, label).toBe(401);
      expect(response.json(), label).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    }
    // Signed for A, sent to B's URL: B's secret does not match.
    expect((await inbound(b, body, sign(body, a.upstreamSecret))).statusCode).toBe(401);
    const [count] = await facadeDatabase.db
      .execute(`select count(*)::int as n from events where source_id like 'evt_%'`)
      .then((r) => (r as unknown as { rows: Array<{ n: number }> }).rows);
    expect(count!.n).toBe(0);
    expect((await feed(a)).length).toBe(before);
  });

  it('takes an event delivered three times once: one event in the feed, one webhook, one streamed', async () => {
    const subscriber = subscribeToEvents(facade.wsUrl, a.key, { types: ['deposit.completed'] });
    try {
      const id = `evt_${randomUUID()}`;
      const body = JSON.stringify({
        id,
        type: 'deposit.completed',
        created: Math.floor(Date.now() / 1000),
        data: { reference: `DEP-${id}`, status: 'COMPLETED', amount: 1500.5, currency: 'NGN', method: 'bank_transfer' },
      });
      const answers = [];
      for (let i = 0; i < 2; i++) answers.push(await inbound(a, body, sign(body, a.upstreamSecret)));
      // The third as this gateway sends during a secret rotation: the secret the facade holds in `-next`.
      answers.push(
        await facade.app.inject({
          method: 'POST',
          url: new URL(a.inboundUrl).pathname,
          headers: {
            'content-type': 'application/json',
            'x-service-signature': sign(body, 'the previous secret'),
            'x-service-signature-next': sign(body, a.upstreamSecret),
          },
          payload: body,
        }),
      );
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      expect(answers.map((r) => r.json().duplicate)).toEqual([false, true, true]);
      await subscriber.until((event) => event.id === id);
      await waitUntil(() => delivered(a).includes(id));
      await waitUntilUnchanged(() => a.receiver.received.length + subscriber.received.length, { quietMs: 1_500 });
      expect(delivered(a).filter((x) => x === id)).toHaveLength(1);
      expect(subscriber.received.filter((e) => e.id === id)).toHaveLength(1);
      expect((await feed(a)).filter((e) => e.id === id)).toHaveLength(1);
      expect(JSON.parse(a.receiver.received.find((r) => JSON.parse(r.body).id === id)!.body)).toEqual(JSON.parse(body));
    } finally {
      await subscriber.close();
    }
  });

  it('refuses an envelope not in the spec’s shape, or older than the ids it remembers, naming the field', async () => {
    const week = 7 * 24 * 3600;
    for (const [field, envelope] of [
      ['id', { type: 'deposit.completed', created: Math.floor(Date.now() / 1000), data: {} }],
      ['type', { id: 'evt_x', type: '', created: Math.floor(Date.now() / 1000), data: {} }],
      ['created', { id: 'evt_x', type: 'deposit.completed', created: 'yesterday', data: {} }],
      ['data', { id: 'evt_x', type: 'deposit.completed', created: Math.floor(Date.now() / 1000), data: [] }],
      [
        'created',
        { id: 'evt_old', type: 'deposit.completed', created: Math.floor(Date.now() / 1000) - week - 60, data: {} },
      ],
    ] as const) {
      const body = JSON.stringify(envelope);
      const response = await inbound(a, body, sign(body, a.upstreamSecret));
      expect(response.statusCode, field).toBe(400);
      expect(response.json().details[0].field, JSON.stringify(envelope)).toBe(field);
    }
    const unknown = await facade.app.inject({
      method: 'POST',
      url: `/webhooks/upstream/${randomUUID()}`,
      headers: { 'content-type': 'application/json', 'x-service-signature': 'a'.repeat(64) },
      payload: '{}',
    });
    expect(unknown.statusCode).toBe(404);
    // A secret with surrounding spaces is not one the upstream gave; a service has no upstream at all.
    const spaced = await graphql(
      facade.app,
      a.key,
      'mutation { registerUpstreamWebhookSecret(secret: " s ") { url } }',
    );
    expect(spaced.body.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'secret' });
    const service = await graphql(
      upstream.t.app,
      a.key,
      'mutation { registerUpstreamWebhookSecret(secret: "s") { url } }',
    );
    expect(service.body.errors![0]!.extensions.code).toBe('NOT_FOUND');
  });

  it('resumes a subscription with `after` across a facade restart, without loss and in order', async () => {
    const first = subscribeToEvents(facade.wsUrl, a.key, { after: 0 });
    let last: StreamedEvent;
    try {
      const seen = (await feed(a)).at(-1)!;
      last = await first.until((event) => event.seq === seen.seq);
    } finally {
      await first.close();
    }
    // While no subscriber listens, two events arrive; then the facade restarts.
    const ids = [`evt_${randomUUID()}`, `evt_${randomUUID()}`];
    for (const id of ids) {
      const body = JSON.stringify({ id, type: 'offramp.completed', created: Math.floor(Date.now() / 1000), data: {} });
      expect((await inbound(a, body, sign(body, a.upstreamSecret))).statusCode).toBe(200);
    }
    await waitUntil(async () => (await feed(a)).filter((e) => ids.includes(e.id)).length === 2);
    await facade.stop();
    facade = await startFacade(facadeDatabase, upstream.baseUrl, facadePort);
    const resumed = subscribeToEvents(facade.wsUrl, a.key, { after: last.seq });
    try {
      await resumed.until((event) => event.id === ids[1]);
      expect(resumed.received.map((e) => e.id)).toEqual(ids);
      expect(resumed.received[0]!.seq).toBeGreaterThan(last.seq);
    } finally {
      await resumed.close();
    }
  });

  it('serves each endpoint’s delivery log, naming each event by the upstream’s id, on GraphQL and REST; a delivery is resent', async () => {
    const id = `evt_${randomUUID()}`;
    const body = JSON.stringify({ id, type: 'payout.failed', created: Math.floor(Date.now() / 1000), data: {} });
    expect((await inbound(b, body, sign(body, b.upstreamSecret))).statusCode).toBe(200);
    await waitUntil(() => delivered(b).includes(id));
    const logOf = async () => {
      const { body: answer } = await graphql(
        facade.app,
        b.key,
        '{ webhookEndpoints { id deliveries { id eventId status attempts { statusCode manual } } } }',
      );
      expect(answer.errors).toBeUndefined();
      return answer.data!.webhookEndpoints[0] as {
        id: string;
        deliveries: Array<{
          id: string;
          eventId: string;
          status: string;
          attempts: Array<{ statusCode: number; manual: boolean }>;
        }>;
      };
    };
    // Asked four times a second at most: the key's rate limit counts these too.
    await waitUntil(async () => (await logOf()).deliveries.some((d) => d.eventId === id && d.status === 'succeeded'), {
      intervalMs: 250,
    });
    const endpoint = await logOf();
    const delivery = endpoint.deliveries.find((d) => d.eventId === id)!;
    expect(delivery.attempts).toEqual([{ statusCode: 200, manual: false }]);
    // Every delivery names an event the partner's receiver got, by the id it got it under.
    for (const d of endpoint.deliveries) expect(delivered(b)).toContain(d.eventId);
    const rest = await facade.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/${endpoint.id}/deliveries`,
      headers: { 'x-api-key': b.key },
    });
    expect(rest.statusCode, rest.body).toBe(200);
    expect(rest.json().data.find((d: { id: string }) => d.id === delivery.id).eventId).toBe(id);
    const resent = await facade.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/deliveries/${delivery.id}/resend`,
      headers: { 'x-api-key': b.key },
    });
    expect(resent.statusCode, resent.body).toBe(202);
    expect(resent.json().data.eventId).toBe(id);
    await waitUntil(() => delivered(b).filter((x) => x === id).length === 2);
    // Another account cannot read or resend it.
    const others = await facade.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/deliveries/${delivery.id}/resend`,
      headers: { 'x-api-key': a.key },
    });
    expect(others.statusCode).toBe(404);
  });

  it('starts a subscription only for a key the upstream accepts, and ends it with 4401 once the upstream revokes the key', async () => {
    const refused = subscribeToEvents(facade.wsUrl, 'pk_unknown_to_the_upstream');
    await waitUntil(() => refused.closed() !== undefined);
    expect(refused.closed()!.code).toBe(4403);
    expect(refused.received).toEqual([]);
    const { apiKey, key } = await upstream.t.services.apiKeys.create({
      userId: a.tenant.user.id,
      name: 'revoked soon',
      environment: 'sandbox',
      permission: 'READ_ONLY',
    });
    const live = subscribeToEvents(facade.wsUrl, key);
    try {
      const id = `evt_${randomUUID()}`;
      const body = JSON.stringify({ id, type: 'payout.completed', created: Math.floor(Date.now() / 1000), data: {} });
      expect((await inbound(a, body, sign(body, a.upstreamSecret))).statusCode).toBe(200);
      await live.until((event) => event.id === id);
      const revoked = await graphql(upstream.t.app, a.key, 'mutation ($id: ID!) { revokeApiKey(id: $id) { id } }', {
        id: apiKey.id,
      });
      expect(revoked.body.errors).toBeUndefined();
      await waitUntil(() => live.closed() !== undefined);
      expect(live.closed()).toEqual({ code: 4401, reason: 'Unauthorized: the credential was revoked' });
    } finally {
      await live.close();
    }
  });
});
