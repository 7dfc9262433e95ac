import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import * as frontend from '../../clients/typescript/examples/frontend.js';
import * as gql from '../../clients/typescript/examples/graphql.js';
import * as rest from '../../clients/typescript/examples/rest.js';
import { createGraphQLClient } from '../../clients/typescript/src/index.js';
import { uploadManifest } from '../../scripts/trusted-documents/upload.js';
import { seedTenant, type StartedTestApp, startTestApp } from '../helpers/app.js';
import { spawnCommand } from '../helpers/child.js';
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
    for (const file of ['rest.ts', 'graphql.ts', 'frontend.ts']) {
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

  it('frontend: a key that runs trusted documents only runs the manifest documents by hash, over HTTP and WebSocket, and nothing else', async () => {
    const tenant = await seedTenant(s.t.services);
    const keys = await s.t.services.apiKeys.list(tenant.user.id);
    const frontendKey = keys.find((k) => k.permission === 'FULL_ACCESS' && k.environment === 'sandbox')!;
    const manifest = JSON.parse(
      readFileSync(
        new URL('../../clients/typescript/src/generated/graphql/persisted-documents.json', import.meta.url),
        'utf8',
      ),
    ) as Record<string, string>;
    const upload = () =>
      uploadManifest({
        url: s.baseUrl,
        key: tenant.keys.ACCOUNT_MANAGEMENT,
        credential: { kind: 'API_KEY', id: frontendKey.id },
        manifest,
        enforce: true,
      });
    const count = Object.keys(manifest).length;
    expect(await upload()).toEqual({ registered: count, alreadyRegistered: 0, trustedDocumentsOnly: true });
    expect(await upload()).toEqual({ registered: 0, alreadyRegistered: count, trustedDocumentsOnly: true });
    // The CLI, as docs/graphql.md writes it (the server's address from PUBLIC_URL): registering again is harmless.
    const documented = readFileSync(new URL('../../docs/graphql.md', import.meta.url), 'utf8').match(
      /`(npm run trusted-documents -- [^`]+)`/,
    )?.[1];
    expect(documented, 'docs/graphql.md shows the command').toBeDefined();
    const manifestPath = fileURLToPath(
      new URL('../../clients/typescript/src/generated/graphql/persisted-documents.json', import.meta.url),
    );
    const cli = spawnCommand(
      'sh',
      [
        '-c',
        documented!
          .replace('<id>', frontendKey.id)
          .replace('<manage key>', tenant.keys.ACCOUNT_MANAGEMENT)
          .replace('<manifest.json>', manifestPath),
      ],
      { PUBLIC_URL: s.baseUrl },
    );
    expect(await cli.exited, cli.output()).toBe(0);
    expect(cli.output()).toContain(`0 registered, ${count} already registered; trusted documents only: on.`);

    const header = await frontend.dashboardHeader(
      frontend.frontendClient({ apiKey: tenant.keys.FULL_ACCESS }, s.baseUrl),
    );
    expect(header).toMatchObject({ name: 'Ada', email: tenant.user.email, balance: { currency: 'NGN', available: 0 } });
    // The README's other documents are in the manifest too: by hash, a mutation and a subscription run.
    const trusted = createGraphQLClient({
      baseUrl: s.baseUrl,
      apiKey: tenant.keys.FULL_ACCESS,
      trustedDocuments: true,
      webSocketImpl: WebSocket,
    });
    expect(await gql.fund(trusted, 2000)).toMatchObject({ status: 'COMPLETED', amount: 2000 });
    await stampAll(s.t.services.db);
    const events = await gql.subscribeToEvents(trusted, { after: 0, types: ['deposit.completed'], count: 1 });
    expect(events.map((event) => event.type)).toEqual(['deposit.completed']);
    // Any other document, with the same key, is refused.
    const other = await fetch(`${s.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.FULL_ACCESS },
      body: JSON.stringify({ query: '{ apiKeys { id } }' }),
    });
    expect(other.status).toBe(403);
    expect(
      ((await other.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code,
    ).toBe('PERSISTED_QUERY_NOT_ALLOWED');
  });
});
