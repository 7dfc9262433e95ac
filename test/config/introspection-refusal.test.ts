import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { graphql, type StartedTestApp, startTestApp } from '../helpers/app.js';

/**
 * With introspection off (production's default, GRAPHQL_INTROSPECTION unset) a partner's
 * `__schema` or `__type` is refused in the gateway's words: where the schema is, and which setting
 * allows it. Not Apollo's advice to "pass introspection: true to ApolloServer".
 */
describe('introspection refused under production defaults', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({
      listen: true,
      config: { NODE_ENV: 'production', SECRETS_KEY: randomBytes(32).toString('base64') },
    });
  });
  afterAll(() => s.t.close());

  const expectGatewayWords = (errors: { message: string; extensions?: Record<string, unknown> }[] | undefined) => {
    expect(errors).toHaveLength(1);
    const [error] = errors!;
    expect(error!.message).toMatch(/^Introspection is turned off on this gateway/);
    expect(error!.message).toMatch(/schema\.graphql/);
    expect(error!.message).toMatch(/GRAPHQL_INTROSPECTION=true/);
    expect(JSON.stringify(errors)).not.toMatch(/Apollo|ApolloServer|introspection: true/);
    return error!;
  };

  it('over HTTP: 400, a validation failure in the gateway words, for __schema and __type', async () => {
    for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Query") { name } }']) {
      const { status, body } = await graphql(s.t.app, s.tenant.keys.READ_ONLY, query);
      expect(status, query).toBe(400);
      expect(body.data).toBeUndefined();
      const error = expectGatewayWords(body.errors);
      expect(error.extensions).toMatchObject({
        code: 'GRAPHQL_VALIDATION_FAILED',
        validationErrorCode: 'INTROSPECTION_DISABLED',
      });
    }
    // __typename is not introspection of the schema: it still answers.
    const typename = await graphql(s.t.app, s.tenant.keys.READ_ONLY, '{ __typename }');
    expect(typename.body.data).toEqual({ __typename: 'Query' });
  });

  it('over the WebSocket: the same words', async () => {
    const client = createClient({
      url: s.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': s.tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    try {
      const errors = await new Promise<{ message: string }[]>((resolve, reject) =>
        client.subscribe(
          { query: '{ __schema { queryType { name } } }' },
          {
            next: (result) => (result.errors ? resolve(result.errors as never) : reject(new Error('answered'))),
            error: (e) => resolve(e as never),
            complete: () => undefined,
          },
        ),
      );
      expectGatewayWords(errors);
    } finally {
      await client.dispose();
    }
  });
});
