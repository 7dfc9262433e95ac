import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

export { graphql } from './generated/graphql/index.js';

/** An `errors` answer of the gateway: the first error's message, with every error kept. */
export class GraphQLRequestError extends Error {
  constructor(readonly errors: Array<{ message: string; extensions?: Record<string, unknown> }>) {
    super(errors[0]?.message ?? 'GraphQL request failed');
    this.name = 'GraphQLRequestError';
  }
  /** `extensions.code` of the first error: BAD_USER_INPUT, UNAUTHENTICATED, INSUFFICIENT_FUNDS… */
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code as string | undefined;
  }
}

export interface GraphQLClientOptions {
  /** The gateway's base URL, e.g. http://localhost:4000 (the endpoint is /graphql). */
  baseUrl: string;
  /** An API key, sent as X-API-KEY; or else `accessToken`. */
  apiKey?: string;
  /** A Connect access token, sent as `Authorization: Bearer …` (a browser app acting for a user). */
  accessToken?: string;
  /**
   * Send each document's hash (`documentId`, the key of persisted-documents.json) instead of its
   * text: for a key or Connect app that runs trusted documents only (docs/graphql.md). Documents
   * without a hash (not made by `graphql(...)`) are sent as text.
   */
  trustedDocuments?: boolean;
  fetch?: typeof globalThis.fetch;
  /** For subscriptions outside browsers and Node 22+: a WebSocket class, e.g. `ws`'s. */
  webSocketImpl?: unknown;
}

export interface GraphQLClient {
  /** Runs a query or mutation; `headers` adds e.g. an Idempotency-Key. Throws GraphQLRequestError on `errors`. */
  request<R, V>(document: TypedDocumentNode<R, V>, variables?: V, headers?: Record<string, string>): Promise<R>;
  /** A subscription's results as an async iterator over graphql-ws; `return()` (or `break`) ends it. */
  subscribe<R, V>(document: TypedDocumentNode<R, V>, variables?: V): AsyncIterableIterator<R>;
  /** Closes the WebSocket, if a subscription opened one. */
  close(): Promise<void>;
}

/** A GraphQL client for typed documents made with `graphql(...)` (graphql-codegen's client preset). */
export function createGraphQLClient({
  baseUrl,
  apiKey,
  accessToken,
  trustedDocuments = false,
  fetch = globalThis.fetch,
  webSocketImpl,
}: GraphQLClientOptions): GraphQLClient {
  const url = `${baseUrl.replace(/\/+$/, '')}/graphql`;
  const credential: Record<string, string> = apiKey
    ? { 'x-api-key': apiKey }
    : accessToken
      ? { authorization: `Bearer ${accessToken}` }
      : {};
  /** The document's `sha256:<hex>` when it is to be sent by hash. */
  const hashOf = (document: unknown) =>
    trustedDocuments ? (document as { __meta__?: { hash?: string } }).__meta__?.hash : undefined;
  let ws: WsClient | undefined;
  return {
    async request(document, variables, headers) {
      const documentId = hashOf(document);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...credential, ...headers },
        body: JSON.stringify(documentId ? { documentId, variables } : { query: print(document), variables }),
      });
      const result = (await response.json()) as { data?: unknown; errors?: GraphQLRequestError['errors'] };
      if (result.errors?.length) throw new GraphQLRequestError(result.errors);
      return result.data as never;
    },
    subscribe<R, V>(document: TypedDocumentNode<R, V>, variables?: V): AsyncIterableIterator<R> {
      ws ??= createWsClient({
        url: url.replace(/^http/, 'ws'),
        connectionParams: credential,
        ...(webSocketImpl ? { webSocketImpl } : {}),
      });
      // graphql-ws carries a hash as Apollo's persisted-query extension, with an empty query.
      const hash = hashOf(document);
      const results = ws.iterate({
        query: hash ? '' : print(document),
        variables: variables as Record<string, unknown>,
        ...(hash ? { extensions: { persistedQuery: { version: 1, sha256Hash: hash.replace(/^sha256:/, '') } } } : {}),
      });
      return (async function* () {
        for await (const result of results) {
          if (result.errors?.length) throw new GraphQLRequestError(result.errors as GraphQLRequestError['errors']);
          yield result.data as R;
        }
      })();
    },
    async close() {
      await ws?.dispose();
      ws = undefined;
    },
  };
}
