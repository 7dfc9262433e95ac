import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { secretBinding } from '../../src/domain/webhooks/webhook-service.js';
import { webhookStore } from '../../src/domain/webhooks/webhook-store.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { relayThenRunDue } from '../helpers/events.js';

/** A TCP listener on every local address that counts connections: any connection at all is a leak. */
async function tripwire(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 22\r\n\r\ninternal-secret-answer');
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  return { server, port: (server.address() as { port: number }).port, connections: () => connections };
}

// DNS as an attacker's zone answers: public-looking names that point inside.
const ATTACKER_ZONE: Record<string, string> = {
  'hooks.partner.example': '127.0.0.1',
  'intranet.partner.example': '10.0.0.7',
  'metadata.partner.example': '169.254.169.254',
};
const attackerDns = (
  host: string,
  _options: unknown,
  callback: (error: Error | null, addresses: Array<{ address: string; family: number }>) => void,
) => {
  const address = ATTACKER_ZONE[host] ?? (host === 'localhost' ? '127.0.0.1' : undefined);
  if (!address) return callback(new Error(`ENOTFOUND ${host}`), []);
  callback(null, [{ address, family: 4 }]);
};

describe('a production server: every key follows the outbound rules', () => {
  let t: TestApp;
  let tenant: Tenant;
  let trap: Awaited<ReturnType<typeof tripwire>>;
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp({
      isolated: true,
      config: { NODE_ENV: 'production', SECRETS_KEY: randomBytes(32).toString('base64') },
    }));
    trap = await tripwire();
  });
  afterAll(async () => {
    trap.server.close();
    await t.close();
  });

  const urls = () => ({
    'plain http to loopback': `http://127.0.0.1:${trap.port}/hooks`,
    loopback: `https://127.0.0.1:${trap.port}/hooks`,
    localhost: `https://localhost:${trap.port}/hooks`,
    'cloud metadata': `https://169.254.169.254:${trap.port}/latest/meta-data`,
    'IPv6 loopback': `https://[::1]:${trap.port}/hooks`,
    'IPv4-mapped IPv6 loopback': `https://[::ffff:127.0.0.1]:${trap.port}/hooks`,
  });

  it('refuses a sandbox key registering loopback, localhost, metadata, [::1] and [::ffff:127.0.0.1]', async () => {
    expect(t.services.config.WEBHOOK_LOCAL_RECEIVERS).toBe(false);
    for (const [label, url] of Object.entries(urls())) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
        payload: { url },
      });
      expect(response.statusCode, label).toBe(400);
      expect(response.json().details[0].field, label).toBe('url');
    }
  });

  it('refuses at connection time whatever is stored (names resolving inside included), and reads nothing back', async () => {
    const clock = new ManualClock(new Date());
    const stored = {
      ...urls(),
      'a name resolving to loopback': `https://hooks.partner.example:${trap.port}/hooks`,
      'a name resolving to a private network': `https://intranet.partner.example:${trap.port}/hooks`,
      'a name resolving to the metadata service': `https://metadata.partner.example:${trap.port}/hooks`,
    };
    const endpoints = new Map<string, string>();
    for (const [label, url] of Object.entries(stored)) {
      // As if saved before the rules changed, or moved in DNS since: the check that counts is at connect time.
      const id = randomUUID();
      await webhookStore.insertEndpoint(t.services.db, {
        id,
        userId: tenant.user.id,
        environment: 'sandbox',
        url,
        eventTypes: ['*'],
        secretSealed: t.services.secrets.seal('whsec_test', secretBinding({ id, userId: tenant.user.id })),
      });
      endpoints.set(label, id);
    }
    const runner = new JobRunner(t.services.db, clock, [
      new WebhookDeliveryHandler(t.services.db, clock, t.services.secrets, {
        lookup: attackerDns as never,
        localReceivers: t.services.config.WEBHOOK_LOCAL_RECEIVERS,
        timeoutMs: 2_000,
      }),
    ]);
    await recordEvent(
      t.services.db,
      { type: 'deposit.completed', userId: tenant.user.id, environment: 'sandbox', data: {} },
      clock.now(),
    );
    while ((await relayThenRunDue(t.services.db, runner)) > 0); // a claim takes at most one tenant's share of the lane
    expect(trap.connections()).toBe(0);
    for (const [label, id] of endpoints) {
      const log = await t.services.webhooks.deliveries({ userId: tenant.user.id, environment: 'sandbox' } as never, id);
      const attempt = log[0]!.attempts[0]!;
      expect(attempt.statusCode, label).toBeNull();
      expect(attempt.responseSnippet, label).toBeNull();
      expect(attempt.error, label).toMatch(/^Refused/);
    }
  });
});

describe('redirects', () => {
  let t: TestApp;
  let tenant: Tenant;
  let redirector: HttpServer;
  let trap: Awaited<ReturnType<typeof tripwire>>;
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp({ isolated: true }));
    trap = await tripwire();
    redirector = createHttpServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${trap.port}/latest/meta-data` });
      res.end('a body that must not be stored');
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    redirector.close();
    trap.server.close();
    await t.close();
  });

  it('are never followed, so a redirect to a private address reaches nothing and nothing is read back', async () => {
    const port = (redirector.address() as { port: number }).port;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
      payload: { url: `http://127.0.0.1:${port}/hooks` },
    });
    expect(created.statusCode).toBe(201);
    const clock = new ManualClock(new Date());
    const runner = new JobRunner(t.services.db, clock, [
      new WebhookDeliveryHandler(t.services.db, clock, t.services.secrets),
    ]);
    await recordEvent(
      t.services.db,
      { type: 'deposit.completed', userId: tenant.user.id, environment: 'sandbox', data: {} },
      clock.now(),
    );
    await relayThenRunDue(t.services.db, runner);
    expect(trap.connections()).toBe(0);
    const log = await t.app.inject({
      url: `/api/v1/webhooks/${created.json().data.endpoint.id}/deliveries`,
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
    });
    expect(log.json().data[0].attempts[0]).toMatchObject({
      statusCode: 307,
      error: 'Redirects are not followed.',
      responseSnippet: null,
    });
  });
});
