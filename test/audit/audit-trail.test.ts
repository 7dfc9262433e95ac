import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { AuditLog } from '../../src/domain/audit/audit-log.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';

const AGENT = 'audit-test/1.0';

describe('the audit trail', () => {
  let t: TestApp;
  let tenant: Tenant;
  let keyId: string;

  /** GraphQL as the tenant's Full Access key, from a recognisable user agent. */
  async function gql(query: string, key = tenant.keys.FULL_ACCESS) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'user-agent': AGENT },
      payload: { query },
    });
    const body = response.json();
    expect(body.errors, query).toBeUndefined();
    return body.data;
  }
  async function records(query = '') {
    const response = await t.app.inject({
      method: 'GET',
      url: `/api/v1/audit-records?limit=200${query}`,
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
    });
    expect(response.statusCode).toBe(200);
    return response.json().data.records as Array<Record<string, any>>;
  }

  beforeAll(async () => {
    // Its own database on PostgreSQL: one test edits and removes records (in a rolled-back transaction).
    t = await createTestApp({ isolated: true });
    tenant = await seedTenant(t.services);
    const principal = await t.services.apiKeys.authenticate(tenant.keys.FULL_ACCESS);
    keyId = principal!.credentialId;
  });
  afterAll(() => t.close());

  const expectOrigin = (record: Record<string, any>) =>
    expect(record).toMatchObject({ actorKind: 'api_key', actorId: keyId, ip: '127.0.0.1', userAgent: AGENT });

  it('records API keys created and revoked, never the key itself', async () => {
    const created = await gql(
      'mutation { createApiKey(input: { name: "ci", permission: READ_ONLY }) { key apiKey { id displayPrefix } } }',
    );
    const id = created.createApiKey.apiKey.id;
    await gql(`mutation { revokeApiKey(id: "${id}") { id } }`);
    const list = await records(`&targetId=${id}`);
    expect(list.map((r) => r.action)).toEqual(['api_key.revoked', 'api_key.created']);
    for (const r of list) expectOrigin(r);
    expect(list[1]!.changes).toEqual({
      name: { to: 'ci' },
      permission: { to: 'READ_ONLY' },
      displayPrefix: { to: created.createApiKey.apiKey.displayPrefix },
    });
    expect(JSON.stringify(list)).not.toContain(created.createApiKey.key);
  });

  it('records webhook endpoints created, changed, their secret rotated, and deleted, never the secret', async () => {
    const created = await gql(
      'mutation { createWebhookEndpoint(input: { url: "https://hooks.example.com/a", eventTypes: ["deposit.completed"] }) { endpoint { id } secret } }',
    );
    const id = created.createWebhookEndpoint.endpoint.id;
    await gql(`mutation { updateWebhookEndpoint(id: "${id}", input: { url: "https://hooks.example.com/b" }) { id } }`);
    const rotated = await gql(`mutation { rotateWebhookSecret(id: "${id}", gracePeriodSeconds: 60) { secret } }`);
    await gql(`mutation { deleteWebhookEndpoint(id: "${id}") { id } }`);
    const list = await records(`&targetType=webhook_endpoint&targetId=${id}`);
    expect(list.map((r) => r.action)).toEqual([
      'webhook_endpoint.deleted',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.updated',
      'webhook_endpoint.created',
    ]);
    for (const r of list) expectOrigin(r);
    expect(list[2]!.changes).toEqual({
      url: { from: 'https://hooks.example.com/a', to: 'https://hooks.example.com/b' },
    });
    expect(list[1]!.changes).toEqual({ secret: { changed: true }, gracePeriodSeconds: { to: 60 } });
    expect(list[3]!.changes).toMatchObject({ secret: { changed: true }, eventTypes: { to: ['deposit.completed'] } });
    const text = JSON.stringify(list);
    expect(text).not.toContain(created.createWebhookEndpoint.secret);
    expect(text).not.toContain(rotated.rotateWebhookSecret.secret);
  });

  it('records payment methods and payout bank accounts added, made default and removed, never a card token', async () => {
    const card = await gql(
      `mutation { createPaymentMethod(input: { type: card, card: { number: "${SANDBOX_PAYMENTS.cards.pinThenOtp}", expMonth: 9, expYear: ${new Date().getUTCFullYear() + 2}, cvv: "564" } }) { id } }`,
    );
    const bank = await gql(
      'mutation { createPaymentMethod(input: { type: bank_account, bankAccount: { bankCode: "044", accountNumber: "0690000031" } }) { id } }',
    );
    await gql(`mutation { setDefaultPaymentMethod(id: "${bank.createPaymentMethod.id}") { id } }`);
    await gql(`mutation { deletePaymentMethod(id: "${card.createPaymentMethod.id}") { id } }`);
    const list = await records('&targetType=payment_method');
    expect(list.map((r) => [r.action, r.targetId])).toEqual([
      ['payment_method.deleted', card.createPaymentMethod.id],
      ['payment_method.default_set', bank.createPaymentMethod.id],
      ['payment_method.created', bank.createPaymentMethod.id],
      ['payment_method.created', card.createPaymentMethod.id],
    ]);
    for (const r of list) expectOrigin(r);
    expect(list[2]!.changes).toMatchObject({
      type: { to: 'bank_account' },
      bankCode: { to: '044' },
      accountLast4: { to: '0031' },
    });
    // The append-only trail keeps the last four digits, never the whole account number.
    expect(JSON.stringify(list)).not.toContain('0690000031');
    expect(Object.keys(list[2]!.changes)).not.toContain('accountNumber');
    expect(list[3]!.changes).toMatchObject({ type: { to: 'card' }, last4: { to: expect.any(String) } });
    expect(JSON.stringify(list)).not.toContain(SANDBOX_PAYMENTS.cards.pinThenOtp);
    expect(Object.keys(list[3]!.changes)).not.toContain('providerToken');
  });

  it('records business customers created, changed and disabled', async () => {
    const business = await t.services.users.createBusiness(tenant.user.id, 'Ada Stores');
    const created = await gql(
      `mutation { createBusinessCustomer(businessId: "${business.id}", input: { name: "Bola", externalRef: "AUD-1" }) { id } }`,
    );
    const id = created.createBusinessCustomer.id;
    await gql(
      `mutation { updateBusinessCustomer(businessId: "${business.id}", id: "${id}", input: { name: "Bola A." }) { id } }`,
    );
    await gql(`mutation { disableBusinessCustomer(businessId: "${business.id}", id: "${id}") { id } }`);
    const list = await records(`&targetId=${id}`);
    expect(list.map((r) => r.action)).toEqual([
      'business_customer.disabled',
      'business_customer.updated',
      'business_customer.created',
    ]);
    for (const r of list) expectOrigin(r);
    expect(list[1]!.changes).toEqual({ name: { from: 'Bola', to: 'Bola A.' }, businessId: { to: business.id } });
    expect(list[0]!.changes).toMatchObject({ status: { from: 'active', to: 'disabled' } });
  });

  it('is readable only by its owner, filtered, and not with a Read Only key', async () => {
    const other = await seedTenant(t.services);
    const theirs = await t.app.inject({
      method: 'GET',
      url: '/api/v1/audit-records',
      headers: { 'x-api-key': other.keys.FULL_ACCESS },
    });
    const ids = new Set((await records()).map((r) => r.id));
    for (const r of theirs.json().data.records) expect(ids.has(r.id)).toBe(false);
    const readOnly = await t.app.inject({
      method: 'GET',
      url: '/api/v1/audit-records',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(readOnly.statusCode).toBe(403);
    const onlyKeys = await records('&action=api_key.created');
    expect(onlyKeys.length).toBeGreaterThan(0);
    expect(onlyKeys.every((r) => r.action === 'api_key.created')).toBe(true);
    const page = await t.app.inject({
      method: 'GET',
      url: '/api/v1/audit-records?limit=2',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
    });
    const next = page.json().data.nextBefore;
    const older = await records(`&before=${next}`);
    expect(older[0]!.id).not.toBe(next);
  });

  it('refuses changes to records, and verify detects an edited and a removed record', async () => {
    await expect(t.services.db.execute(sql`update audit_records set action = 'x'`)).rejects.toThrow();
    await expect(t.services.db.execute(sql`delete from audit_records`)).rejects.toThrow();
    expect(await t.services.auditLog.verify()).toMatchObject({ ok: true, breaks: [] });

    const [target] = await records('&targetType=webhook_endpoint&action=webhook_endpoint.updated');
    const tampered = async (change: string) => {
      const rollback = new Error('rollback');
      let result: Awaited<ReturnType<AuditLog['verify']>> | undefined;
      await t.services.db
        .transaction(async (tx) => {
          // Someone with the owner's rights, going around the trigger.
          await tx.execute(sql`alter table audit_records disable trigger audit_records_append_only`);
          await tx.execute(sql.raw(change.replace('$ID', target!.id)));
          result = await new AuditLog(tx as unknown as Database).verify();
          throw rollback;
        })
        .catch((error) => {
          if (error !== rollback) throw error;
        });
      return result!;
    };
    const edited = await tampered(
      `update audit_records set changes = '{"url":{"to":"https://evil.example"}}' where id = '$ID'`,
    );
    expect(edited.ok).toBe(false);
    expect(edited.breaks).toEqual([expect.objectContaining({ id: target!.id, problem: 'edited' })]);

    const removed = await tampered(`delete from audit_records where id = '$ID'`);
    expect(removed.ok).toBe(false);
    expect(removed.breaks).toHaveLength(1);
    expect(removed.breaks[0]).toMatchObject({ problem: 'chain_broken' });
    expect(removed.breaks[0]!.id).not.toBe(target!.id);

    expect(await t.services.auditLog.verify()).toMatchObject({ ok: true });
  });
});
