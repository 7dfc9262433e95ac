import { createHash } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Documents as the client preset's persisted-documents.json holds them: its own print of each. */
const ME = 'query Me { me { id email } }';
const API_INFO = 'query ApiInfo { apiInfo { version } }';
const EVENTS = 'subscription Live { events { seq type } }';

describe('trusted documents: a credential with a list runs its registered documents and no other', () => {
  let t: TestApp;
  let tenant: Tenant;
  let wsUrl: string;
  let frontendKeyId: string;

  const post = (key: string, payload: Record<string, unknown>) =>
    t.app
      .inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        payload,
      })
      .then((r) => ({ status: r.statusCode, body: r.json() as { data?: any; errors?: any[] } }));

  beforeAll(async () => {
    ({ t, tenant, wsUrl } = await startTestApp({ listen: true }));
    const keys = await t.services.apiKeys.list(tenant.user.id);
    frontendKeyId = keys.find((k) => k.permission === 'READ_ONLY' && k.environment === 'sandbox')!.id;
    // A server key (manage) registers the frontend key's documents, then turns the list on.
    const registered = await graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation Register($input: RegisterTrustedDocumentsInput!) {
        registerTrustedDocuments(input: $input) { registered alreadyRegistered access { trustedDocuments { id operationName } } }
      }`,
      {
        input: {
          credential: { kind: 'API_KEY', id: frontendKeyId },
          documents: [{ body: ME, hash: `sha256:${sha256(ME)}` }, { body: EVENTS }],
        },
      },
    );
    expect(registered.body.errors).toBeUndefined();
    expect(registered.body.data!.registerTrustedDocuments).toMatchObject({ registered: 2, alreadyRegistered: 0 });
    const on = await graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { setGraphQLAccess(input: { credential: { kind: API_KEY, id: "${frontendKeyId}" }, trustedDocumentsOnly: true }) { trustedDocumentsOnly } }`,
    );
    expect(on.body.data?.setGraphQLAccess.trustedDocumentsOnly).toBe(true);
  });
  afterAll(() => t.close());

  it('runs a registered document sent as text', async () => {
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, ME);
    expect(status).toBe(200);
    expect(body.data?.me.id).toBe(tenant.user.id);
  });

  it('matches a registered document sent in another layout (the client printing it its own way)', async () => {
    const { status, body } = await graphql(
      t.app,
      tenant.keys.READ_ONLY,
      'query Me {\n  me {\n    id\n    email\n  }\n}\n',
    );
    expect(status).toBe(200);
    expect(body.data?.me.email).toBeDefined();
  });

  it('refuses an unregistered document with 403 PERSISTED_QUERY_NOT_ALLOWED naming the operation', async () => {
    const { status, body } = await graphql(t.app, tenant.keys.READ_ONLY, API_INFO);
    expect(status).toBe(403);
    expect(body.errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    expect(body.errors?.[0]?.message).toContain('operation "ApiInfo"');
    expect(body.errors?.[0]?.message).toContain(`sha256:${sha256(API_INFO)}`);
    expect(body.errors?.[0]?.message).not.toContain(tenant.keys.READ_ONLY);
    expect(body.data).toBeUndefined();
  });

  it('runs a registered document by hash: Apollo persisted query or the client preset documentId', async () => {
    const apq = await post(tenant.keys.READ_ONLY, {
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(ME) } },
    });
    expect(apq.status).toBe(200);
    expect(apq.body.data?.me.id).toBe(tenant.user.id);
    const documentId = await post(tenant.keys.READ_ONLY, { documentId: `sha256:${sha256(ME)}` });
    expect(documentId.status).toBe(200);
    expect(documentId.body.data?.me.id).toBe(tenant.user.id);
  });

  it("runs a registered document by hash over GET (Apollo's extensions parameter), and refuses another", async () => {
    const get = (hash: string) =>
      t.app.inject({
        method: 'GET',
        url: `/graphql?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } }))}`,
        headers: { 'x-api-key': tenant.keys.READ_ONLY, 'apollo-require-preflight': 'true' },
      });
    const known = await get(sha256(ME));
    expect(known.statusCode).toBe(200);
    expect(known.json().data.me.id).toBe(tenant.user.id);
    const unknown = await get(sha256(API_INFO));
    expect(unknown.statusCode).toBe(403);
    expect(unknown.json().errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
  });

  it('refuses an unregistered hash, even one Apollo learnt from another credential', async () => {
    // Another key registers the document in Apollo's own persisted-query cache (hash and text).
    const learnt = await post(tenant.keys.FULL_ACCESS, {
      query: API_INFO,
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(API_INFO) } },
    });
    expect(learnt.status).toBe(200);
    const byHash = await post(tenant.keys.READ_ONLY, {
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(API_INFO) } },
    });
    expect(byHash.status).toBe(403);
    expect(byHash.body.errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    expect(byHash.body.errors?.[0]?.message).toContain(`sha256:${sha256(API_INFO)}`);
    const byDocumentId = await post(tenant.keys.READ_ONLY, { documentId: `sha256:${sha256(API_INFO)}` });
    expect(byDocumentId.status).toBe(403);
  });

  it('leaves a credential without a list as it was', async () => {
    const { status, body } = await graphql(t.app, tenant.keys.FULL_ACCESS, API_INFO);
    expect(status).toBe(200);
    expect(body.data?.apiInfo.version).toBeDefined();
  });

  it("leaves REST v1 routes (the gateway's own documents) as they were for that credential", async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v1/user/me',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(response.statusCode).toBe(200);
  });

  it('holds subscriptions over the WebSocket to the same list', async () => {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    const first = (query: string, extensions?: Record<string, unknown>) =>
      // Queries over the socket answer once and complete.
      new Promise<{ data?: any; errors?: any[] }>((resolve) => {
        client.subscribe(
          { query, ...(extensions ? { extensions } : {}) },
          {
            next: (result) => resolve(result as any),
            error: (errors) => resolve({ errors: errors as any[] }),
            complete: () => resolve({}),
          },
        );
      });
    try {
      const refused = await first('subscription Other { events { seq } }');
      expect(refused.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
      expect(refused.errors?.[0]?.message).toContain('operation "Other"');
      // A registered query runs over the socket too (as text, then by hash).
      const byText = await first(ME);
      expect(byText.data?.me.id).toBe(tenant.user.id);
      const byHash = await first('', { persistedQuery: { version: 1, sha256Hash: sha256(ME) } });
      expect(byHash.data?.me.id).toBe(tenant.user.id);
    } finally {
      await client.dispose();
    }
  });

  it("REST: reads, registers and removes a key's trusted documents under /api/v1/api-keys/{id}", async () => {
    const rest = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: Record<string, unknown>) =>
      t.app.inject({
        method,
        url: `/api/v1/api-keys/${frontendKeyId}${path}`,
        headers: { 'x-api-key': tenant.keys.ACCOUNT_MANAGEMENT },
        ...(payload ? { payload } : {}),
      });
    const read = await rest('GET', '/graphql-access');
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toMatchObject({ kind: 'API_KEY', id: frontendKeyId, trustedDocumentsOnly: true });
    expect(read.json().data.trustedDocuments.map((d: { id: string }) => d.id)).toContain(`sha256:${sha256(ME)}`);

    const added = await rest('POST', '/trusted-documents', { documents: [{ body: API_INFO }] });
    expect(added.statusCode).toBe(201);
    expect(added.json().data).toMatchObject({ registered: 1, alreadyRegistered: 0 });
    expect((await graphql(t.app, tenant.keys.READ_ONLY, API_INFO)).status).toBe(200);
    const removed = await rest('DELETE', `/trusted-documents/sha256:${sha256(API_INFO)}`);
    expect(removed.statusCode).toBe(200);
    expect((await graphql(t.app, tenant.keys.READ_ONLY, API_INFO)).status).toBe(403);

    const tooHigh = await rest('PATCH', '/graphql-access', { maxComplexity: 1_000_000 });
    expect(tooHigh.statusCode).toBe(400);
    expect(JSON.stringify(tooHigh.json())).toContain('maxComplexity');
  });

  it("validates what is registered: the hash must be the text's, naming the field", async () => {
    const { body } = await graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { registerTrustedDocuments(input: { credential: { kind: API_KEY, id: "${frontendKeyId}" }, documents: [{ body: "query A { me { id } }", hash: "${sha256('other')}" }, { body: "{ me " }] }) { registered } }`,
    );
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    const details = body.errors![0]!.extensions.details as Array<{ field: string }>;
    const fields = details.map((d) => d.field);
    expect(fields).toEqual(['documents[0].hash', 'documents[1].body']);
  });

  it("a credential cannot change its own settings, and another account's key is not found", async () => {
    const keys = await t.services.apiKeys.list(tenant.user.id);
    const managerId = keys.find((k) => k.permission === 'ACCOUNT_MANAGEMENT' && k.environment === 'sandbox')!.id;
    const own = await graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { setGraphQLAccess(input: { credential: { kind: API_KEY, id: "${managerId}" }, maxComplexity: 10 }) { maxComplexity } }`,
    );
    expect(own.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const stranger = await startStranger();
    const other = await graphql(
      t.app,
      stranger,
      `mutation { setGraphQLAccess(input: { credential: { kind: API_KEY, id: "${frontendKeyId}" }, trustedDocumentsOnly: false }) { trustedDocumentsOnly } }`,
    );
    expect(other.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const still = await graphql(t.app, tenant.keys.READ_ONLY, API_INFO);
    expect(still.status).toBe(403);
  });

  async function startStranger(): Promise<string> {
    const { seedTenant } = await import('../helpers/app.js');
    return (await seedTenant(t.services)).keys.FULL_ACCESS;
  }
});
