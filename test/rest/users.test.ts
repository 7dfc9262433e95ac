import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const SEED_USER_FIELDS = [
  'id',
  'createdAt',
  'updatedAt',
  'deletedDate',
  'email',
  'phone',
  'firstName',
  'lastName',
  'name',
  'haveTransactionPin',
  'verified',
  'resetToken',
  'resetTokenExpiry',
  'dob',
  'isAdmin',
  'deviceId',
  'deviceIp',
  'deviceModel',
  'platform',
  'lastLoggedIn',
];

describe('GET /api/v1/user/me and GraphQL me', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => ({ t, tenant } = await startTestApp()));
  afterAll(() => t.close());

  it('answers the envelope with every field of the seed user', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v1/user/me',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/application\/json/);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'errors', 'message', 'statusCode']);
    expect(body.statusCode).toBe(200);
    expect(body.errors).toEqual({});
    expect(typeof body.message).toBe('string');
    expect(Object.keys(body.data).sort()).toEqual([...SEED_USER_FIELDS].sort());
    expect(body.data).toMatchObject({
      id: tenant.user.id,
      email: tenant.user.email,
      phone: '+2348030000000',
      firstName: 'Ada',
      lastName: 'Obi',
      name: 'Ada Obi',
      haveTransactionPin: false,
      verified: false,
      resetToken: null,
      resetTokenExpiry: null,
      isAdmin: false,
      deletedDate: null,
    });
    expect(new Date(body.data.createdAt).toISOString()).toBe(body.data.createdAt);
  });

  it('GraphQL me has the same fields and values', async () => {
    const rest = (
      await t.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': tenant.keys.READ_ONLY } })
    ).json().data;
    const { body } = await graphql(
      t.app,
      tenant.keys.READ_ONLY,
      `{ me { ${SEED_USER_FIELDS.join(' ')} businesses { id name } } }`,
    );
    expect(body.errors).toBeUndefined();
    const { businesses, ...me } = body.data!.me;
    expect(me).toEqual(rest);
    expect(businesses).toEqual([]);
  });

  it('lists the businesses the user owns', async () => {
    const business = await t.services.users.createBusiness(tenant.user.id, 'Kano Stores');
    const { body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ me { businesses { id name } } }');
    expect(body.data!.me.businesses).toEqual([{ id: business.id, name: 'Kano Stores' }]);
  });

  it('retrieves a user by id only when the caller acts for it', async () => {
    const other = await seedTenant(t.services);
    const own = await t.app.inject({
      url: `/api/v1/users/${tenant.user.id}`,
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(own.statusCode).toBe(200);
    expect(own.json().data.id).toBe(tenant.user.id);

    const foreign = await t.app.inject({
      url: `/api/v1/users/${other.user.id}`,
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    const missing = await t.app.inject({
      url: '/api/v1/users/00000000-0000-4000-8000-000000000000',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    const garbage = await t.app.inject({
      url: '/api/v1/users/not-a-uuid',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    expect(garbage.json()).toEqual(missing.json());
    expect(missing.json()).toEqual({ statusCode: 404, message: 'User was not found.', error: 'Not Found' });

    const gql = await graphql(t.app, tenant.keys.READ_ONLY, 'query($id: ID!) { user(id: $id) { id } }', {
      id: other.user.id,
    });
    expect(gql.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});
