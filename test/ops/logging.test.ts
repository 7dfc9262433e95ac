import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { seedTenant } from '../helpers/app.js';
import { loggingAt } from '../helpers/log-file.js';

describe('logs', () => {
  it('carry the request id and never a key, token or cookie', async () => {
    const { services, lines, stream } = await loggingAt();
    const tenant = await seedTenant(services);
    const app = await buildApp({
      services,
      logger: {
        stream,
        // Log request headers too, the riskiest thing a future change could add.
        serializers: { req: (req: { headers: unknown; url: string }) => ({ url: req.url, headers: req.headers }) },
      },
    });
    await app.inject({
      url: '/api/v1/user/me',
      headers: { 'x-api-key': tenant.keys.READ_ONLY, 'x-request-id': 'trace-me-123' },
    });
    await app.inject({
      url: '/api/v1/user/me',
      headers: { authorization: `Bearer ${tenant.keys.FULL_ACCESS}`, cookie: 'session=s3cret' },
    });
    await app.close();
    const log = lines.join('');
    expect(log).toContain('trace-me-123');
    expect(log).toContain('/api/v1/user/me');
    expect(log).not.toContain(tenant.keys.READ_ONLY);
    expect(log).not.toContain(tenant.keys.FULL_ACCESS.slice(9));
    expect(log).not.toContain('s3cret');
  });

  it('never carry a card number or CVV, on success or on refusal, at the most verbose level', async () => {
    const { services, lines, stream } = await loggingAt('trace');
    const tenant = await seedTenant(services);
    const app = await buildApp({ services, logger: { stream, level: 'trace' } });
    const card = (number: string, cvv: string) => ({
      type: 'card',
      card: { number, expMonth: 9, expYear: new Date().getUTCFullYear() + 2, cvv },
    });
    const ok = await app.inject({
      method: 'POST',
      url: '/api/v1/payment-methods',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
      payload: card('5531886652142950', '8417'),
    });
    const refused = await app.inject({
      method: 'POST',
      url: '/api/v1/payment-methods',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
      payload: card('5531886652142951', '7319'),
    });
    const graph = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS, 'content-type': 'application/json' },
      payload: {
        query: 'mutation ($input: CreatePaymentMethodInput!) { createPaymentMethod(input: $input) { last4 } }',
        variables: { input: card('4187427415564246', '9023') },
      },
    });
    await app.close();
    expect([ok.statusCode, refused.statusCode, graph.statusCode]).toEqual([201, 400, 200]);
    const log = lines.join('');
    expect(log.length).toBeGreaterThan(0);
    // Card numbers are 16 digits (no timestamp or id holds them); a CVV is too short to search for
    // safely, so the field itself must be absent.
    for (const number of ['5531886652142950', '5531886652142951', '4187427415564246'])
      expect(log).not.toContain(number);
    expect(log.toLowerCase()).not.toContain('cvv');
  });
});
