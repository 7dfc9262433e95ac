import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';

describe('business customers', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  async function owner(): Promise<{ tenant: Tenant; businessId: string }> {
    const tenant = await seedTenant(s.t.services);
    const business = await s.t.services.users.createBusiness(tenant.user.id, 'Ada Stores');
    return { tenant, businessId: business.id };
  }

  it("lists the caller's businesses over REST with the businessId the customer routes take", async () => {
    const { tenant, businessId } = await owner();
    const second = await s.t.services.users.createBusiness(tenant.user.id, 'Ada Foods');
    await owner(); // another user's business, never listed here
    const listed = await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/businesses');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      statusCode: 200,
      message: 'Businesses retrieved successfully',
      errors: {},
      data: [
        { id: businessId, name: 'Ada Stores', createdAt: expect.any(String), updatedAt: expect.any(String) },
        { id: second.id, name: 'Ada Foods', createdAt: expect.any(String), updatedAt: expect.any(String) },
      ],
    });
    const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)(
      'POST',
      `/api/v1/customers/${listed.json().data[0].id}`,
      { name: 'Chidi Okafor' },
    );
    expect(created.statusCode).toBe(201);
    expect((await s.t.app.inject({ url: '/api/v1/businesses' })).statusCode).toBe(401);
  });

  it("creates a customer with the seed's body, lists, gets, updates and disables it", async () => {
    const { tenant, businessId } = await owner();
    const manage = rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT);
    const created = await manage('POST', `/api/v1/customers/${businessId}`, {
      name: 'Chidi Okafor',
      phone: '+234 803 123 4567',
      email: 'Chidi@Example.com',
      externalRef: 'CUS-1',
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      statusCode: 201,
      message: 'Customer created successfully',
      errors: {},
      data: {
        businessId,
        name: 'Chidi Okafor',
        phone: '+2348031234567',
        email: 'chidi@example.com',
        externalRef: 'CUS-1',
        status: 'active',
      },
    });
    const id = created.json().data.id;
    await manage('POST', `/api/v1/customers/${businessId}`, { name: 'Ngozi Eze' });
    const listed = (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/customers/${businessId}`)).json().data;
    expect(listed).toMatchObject({ total: 2, page: 1, hasNext: false });
    expect(listed.customers.map((c: { name: string }) => c.name)).toEqual(['Ngozi Eze', 'Chidi Okafor']);
    expect(
      (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/customers/${businessId}/${id}`)).json().data.externalRef,
    ).toBe('CUS-1');
    const updated = await manage('PATCH', `/api/v1/customers/${businessId}/${id}`, { email: 'chidi@okafor.ng' });
    expect(updated.json().data).toMatchObject({ email: 'chidi@okafor.ng', name: 'Chidi Okafor' });
    const disabled = await manage('POST', `/api/v1/customers/${businessId}/${id}/disable`);
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json().data.status).toBe('disabled');
    expect(
      (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/customers/${businessId}?status=disabled`)).json().data
        .total,
    ).toBe(1);
  });

  it('refuses bad fields naming them, a taken externalRef with 409, and keeps environments and owners apart', async () => {
    const { tenant, businessId } = await owner();
    const manage = rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT);
    for (const [body, field] of [
      [{}, 'name'],
      [{ name: ' ' }, 'name'],
      [{ name: 'A', email: 'not-an-email' }, 'email'],
      [{ name: 'A', phone: 'call me' }, 'phone'],
      [{ name: 'A', externalRef: 'has spaces' }, 'externalRef'],
      [{ name: 5 }, 'name'],
    ] as const) {
      const response = await manage('POST', `/api/v1/customers/${businessId}`, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().message, JSON.stringify(body)).toContain(field);
    }
    // Several bad fields: one answer names them all, in the message and in details.
    const three = await manage('POST', `/api/v1/customers/${businessId}`, {
      name: ' ',
      phone: 'call me',
      email: 'not-an-email',
    });
    expect(three.statusCode).toBe(400);
    expect(three.json()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'name is required. phone must be a phone number such as +2348031234567. email must be an email address.',
      details: [
        { field: 'name', message: 'name is required.' },
        { field: 'phone', message: 'phone must be a phone number such as +2348031234567.' },
        { field: 'email', message: 'email must be an email address.' },
      ],
    });
    await manage('POST', `/api/v1/customers/${businessId}`, { name: 'A', externalRef: 'REF-1' });
    const taken = await manage('POST', `/api/v1/customers/${businessId}`, { name: 'B', externalRef: 'REF-1' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toContain('externalRef');
    // The same externalRef in production is another customer list.
    expect(
      (
        await rest(s.t, tenant.productionKey)('POST', `/api/v1/customers/${businessId}`, {
          name: 'B',
          externalRef: 'REF-1',
        })
      ).statusCode,
    ).toBe(201);
    expect((await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/customers/${businessId}`)).json().data.total).toBe(
      1,
    );
    const stranger = await seedTenant(s.t.services);
    const theirs = await rest(s.t, stranger.keys.ACCOUNT_MANAGEMENT)('POST', `/api/v1/customers/${businessId}`, {
      name: 'X',
    });
    const missing = await rest(s.t, stranger.keys.ACCOUNT_MANAGEMENT)(
      'POST',
      '/api/v1/customers/00000000-0000-4000-8000-000000000000',
      { name: 'X' },
    );
    expect([theirs.statusCode, missing.statusCode]).toEqual([404, 404]);
    expect(theirs.json()).toEqual(missing.json());
    expect(
      (await rest(s.t, tenant.keys.READ_ONLY)('POST', `/api/v1/customers/${businessId}`, { name: 'X' })).statusCode,
    ).toBe(403);
    expect(
      (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/customers/${businessId}/not-an-id`)).statusCode,
    ).toBe(404);
  });

  it('serves customers over GraphQL', async () => {
    const { tenant, businessId } = await owner();
    const key = tenant.keys.FULL_ACCESS;
    const created = await graphql(
      s.t.app,
      key,
      `mutation { createBusinessCustomer(businessId: "${businessId}", input: { name: "Bola", externalRef: "G-1" }) { id status } }`,
    );
    const id = created.body.data!.createBusinessCustomer.id;
    const updated = await graphql(
      s.t.app,
      key,
      `mutation { updateBusinessCustomer(businessId: "${businessId}", id: "${id}", input: { phone: "08031234567" }) { phone } disableBusinessCustomer(businessId: "${businessId}", id: "${id}") { status } }`,
    );
    expect(updated.body.data).toEqual({
      updateBusinessCustomer: { phone: '08031234567' },
      disableBusinessCustomer: { status: 'disabled' },
    });
    const read = await graphql(
      s.t.app,
      key,
      `{ businessCustomers(businessId: "${businessId}") { total customers { externalRef } } businessCustomer(businessId: "${businessId}", id: "${id}") { name } }`,
    );
    expect(read.body.data).toEqual({
      businessCustomers: { total: 1, customers: [{ externalRef: 'G-1' }] },
      businessCustomer: { name: 'Bola' },
    });
  });
});
