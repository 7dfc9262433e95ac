import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as gql from '../../clients/typescript/examples/graphql.js';
import * as rest from '../../clients/typescript/examples/rest.js';
import { seedTenant, type StartedTestApp, startTestApp } from '../helpers/app.js';
import { stampAll } from '../helpers/events.js';

/**
 * The examples of clients/typescript/README.md, run as written against a gateway listening on a
 * local port: the typed REST client (openapi-fetch) and the typed GraphQL documents, over HTTP and
 * WebSocket. Each tenant is fresh, so balances and lists are this test's own.
 */
describe('the TypeScript client examples against a live gateway', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ listen: true });
  });
  afterAll(() => s.t.close());

  it('the README shows each example file as it is', () => {
    const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
    for (const file of ['rest.ts', 'graphql.ts']) {
      const source = readFileSync(new URL(`../../clients/typescript/examples/${file}`, import.meta.url), 'utf8');
      expect(readme, file).toContain(source.trim());
    }
  });

  it('REST: fund the wallet, pay a bill, list records, read the event feed', async () => {
    const client = rest.client(s.tenant.keys.FULL_ACCESS, s.baseUrl);
    const balance = await rest.fund(client, 5000);
    expect(balance).toMatchObject({ currency: 'NGN', available: 5000, availableKobo: 500_000 });
    const paid = await rest.payBill(client);
    expect(paid).toMatchObject({ type: 'AIRTIME', status: 'SUCCESS', amount: 500, customer: '08031234567' });
    const records = await rest.listRecords(client);
    expect(records.map((record) => record.reference)).toEqual([paid.reference]);
    await stampAll(s.t.services.db);
    const feed = await rest.readEvents(client);
    expect(feed.events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['deposit.completed', 'bill.payment.successful']),
    );
    expect((await rest.readEvents(client, feed.endSeq)).events).toEqual([]);
  });

  it('REST: an error is the typed error body, not a throw', async () => {
    const client = rest.client(s.tenant.keys.READ_ONLY, s.baseUrl);
    const refused = await client.POST('/api/v1/bills/buy-airtime', {
      body: { phoneNumber: '08031234567', biller: 'MTN', amount: 500 },
    });
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    await expect(rest.payBill(client)).rejects.toThrow(/^403: /);
  });

  it('GraphQL: fund the wallet, pay a bill, list records, subscribe to events', async () => {
    const tenant = await seedTenant(s.t.services);
    const client = gql.client(tenant.keys.FULL_ACCESS, s.baseUrl);
    const deposit = await gql.fund(client, 2000);
    expect(deposit).toMatchObject({ status: 'COMPLETED', amount: 2000 });
    const paid = await gql.payBill(client);
    expect(paid).toMatchObject({ status: 'SUCCESS', amount: 500, billerName: expect.any(String) });
    const bills = await gql.listRecords(client);
    expect(bills.map((bill) => bill.reference)).toEqual([paid.reference]);
    await stampAll(s.t.services.db);
    const events = await gql.subscribeToEvents(client, { after: 0, count: 2 });
    expect(events.map((event) => event.type)).toEqual(['deposit.completed', 'bill.payment.successful']);
    expect(events[0]!.seq).toBeLessThan(events[1]!.seq);
  });
});
