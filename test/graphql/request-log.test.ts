import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { seedTenant } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';

describe('a /graphql request', () => {
  it("names its operation on the request's log line", async () => {
    const { db } = await testDatabase();
    const services = createServices(
      loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'info' }),
      db,
      systemClock,
      () => undefined,
    );
    const tenant = await seedTenant(services);
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) });
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
