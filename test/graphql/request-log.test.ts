import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { seedTenant } from '../helpers/app.js';
import { loggingAt } from '../helpers/log-file.js';

describe('a /graphql request', () => {
  it("names its operation on the request's log line", async () => {
    const { services, lines, stream } = await loggingAt();
    const tenant = await seedTenant(services);
    const app = await buildApp({ services, logger: { stream } });
    const named = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': tenant.keys.READ_ONLY, 'content-type': 'application/json' },
      payload: { query: 'query WhoAmI { me { id } }' },
    });
    const anonymous = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': tenant.keys.READ_ONLY, 'content-type': 'application/json' },
      payload: { query: '{ me { email } }' },
    });
    await app.close();
    expect([named.statusCode, anonymous.statusCode]).toEqual([200, 200]);
    const completed = lines
      .map((line) => JSON.parse(line) as { msg: string; route?: string; operation?: string; credentialId?: string })
      .filter((line) => line.msg === 'request completed' && line.route === '/graphql');
    expect(completed.map((line) => line.operation)).toEqual(['WhoAmI', '(anonymous query)']);
    expect(completed.every((line) => line.credentialId !== undefined)).toBe(true);
  });
});
