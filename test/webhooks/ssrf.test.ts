import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { isBlockedAddress } from '../../src/domain/webhooks/url-policy.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { relayThenRunDue } from '../helpers/events.js';
import { Receiver } from '../helpers/receiver.js';

describe('webhook URLs and SSRF', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => ({ t, tenant } = await startTestApp({ isolated: true })));
  afterAll(() => t.close());

  const create = (key: string, url: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { 'x-api-key': key }, payload: { url } });

  it.each([
    ['plain http', 'http://hooks.partner.example/x', /https/],
    ['loopback', 'https://127.0.0.1/x', /private, loopback/],
    ['IPv6 loopback', 'https://[::1]/x', /private, loopback/],
    ['private network', 'https://10.1.2.3/x', /private, loopback/],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data', /private, loopback/],
    ['IPv4-mapped IPv6', 'https://[::ffff:192.168.1.1]/x', /private, loopback/],
    ['localhost', 'https://localhost/x', /publicly reachable/],
    ['credentials in the URL', 'https://user:pass@hooks.partner.example/x', /credentials/],
  ])('production refuses %s', async (_label, url, message) => {
    const response = await create(tenant.productionKey, url);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(message);
    expect(response.json().details[0].field).toBe('url');
  });

  it('sandbox allows http and local addresses, for local testing', async () => {
    expect((await create(tenant.keys.FULL_ACCESS, 'http://127.0.0.1:3000/hooks')).statusCode).toBe(201);
    expect((await create(tenant.keys.FULL_ACCESS, 'http://localhost:3000/hooks')).statusCode).toBe(201);
  });

  it('classifies addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      'not-an-ip',
    ]) {
      expect(isBlockedAddress(address), address).toBe(true);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])
      expect(isBlockedAddress(address), address).toBe(false);
  });

  it('checks the address at connection time: a public-looking name that resolves to 127.0.0.1 is refused', async () => {
    const receiver = await new Receiver().start();
    const port = new URL(receiver.url).port;
    const created = await create(tenant.productionKey, `https://hooks.partner.example:${port}/hooks`);
    expect(created.statusCode).toBe(201);
    const endpointId = created.json().data.endpoint.id;
    const clock = new ManualClock(new Date());
    // DNS that answers the way an attacker's zone would.
    const lookup = (
      _host: string,
      _options: unknown,
      callback: (error: null, addresses: Array<{ address: string; family: number }>) => void,
    ) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const runner = new JobRunner(t.services.db, clock, [
      new WebhookDeliveryHandler(t.services.db, clock, t.services.secrets, { lookup: lookup as never }),
    ]);
    await recordEvent(
      t.services.db,
      { type: 'payout.completed', userId: tenant.user.id, environment: 'production', data: {} },
      clock.now(),
    );
    await relayThenRunDue(t.services.db, runner);
    expect(receiver.received).toHaveLength(0);
    const log = await t.app.inject({
      url: `/api/v1/webhooks/${endpointId}/deliveries`,
      headers: { 'x-api-key': tenant.productionKey },
    });
    expect(log.json().data[0].attempts[0]).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/Refused to connect to hooks\.partner\.example: it resolves to 127\.0\.0\.1/),
    });
    await receiver.stop();
  });
});
