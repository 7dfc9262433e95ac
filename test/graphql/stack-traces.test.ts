import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, graphql, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

/** Stack traces in GraphQL errors are asked for (GRAPHQL_STACK_TRACES), never implied by NODE_ENV. */
describe('GraphQL stack traces', () => {
  let development: TestApp;
  let asked: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    development = await createTestApp({ config: { NODE_ENV: 'development' } });
    asked = await createTestApp({ config: { NODE_ENV: 'development', GRAPHQL_STACK_TRACES: true } });
    tenant = await seedTenant(development.services);
    for (const { services } of [development, asked])
      services.users.usersByIds = async () => {
        throw new Error('the user store failed');
      };
  });
  afterAll(async () => {
    await development.close();
    await asked.close();
  });

  it('development answers without them: an unexpected failure and a validation error carry no stacktrace', async () => {
    const failed = await graphql(development.app, tenant.keys.READ_ONLY, '{ me { id } }');
    expect(failed.body.errors?.[0]?.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    const invalid = await graphql(development.app, tenant.keys.READ_ONLY, '{ me { nope } }');
    expect(invalid.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify([failed.body, invalid.body])).not.toContain('stacktrace');
  });

  it('GRAPHQL_STACK_TRACES=true adds them', async () => {
    const failed = await graphql(asked.app, tenant.keys.READ_ONLY, '{ me { id } }');
    expect(failed.body.errors?.[0]?.extensions.stacktrace).toEqual(
      expect.arrayContaining([expect.stringContaining('the user store failed')]),
    );
  });

  it('is off by default and refused in production', () => {
    expect(loadConfig({}).GRAPHQL_STACK_TRACES).toBe(false);
    expect(loadConfig({ GRAPHQL_STACK_TRACES: 'true' }).GRAPHQL_STACK_TRACES).toBe(true);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        SECRETS_KEY: randomBytes(32).toString('base64'),
        GRAPHQL_STACK_TRACES: 'true',
      }),
    ).toThrow(ConfigError);
  });
});
