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
  apiKey: string;
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
  fetch = globalThis.fetch,
  webSocketImpl,
}: GraphQLClientOptions): GraphQLClient {
  const url = `${baseUrl.replace(/\/+$/, '')}/graphql`;
  let ws: WsClient | undefined;
  return {
    async request(document, variables, headers) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers },
        body: JSON.stringify({ query: print(document), variables }),
      });
      const result = (await response.json()) as { data?: unknown; errors?: GraphQLRequestError['errors'] };
      if (result.errors?.length) throw new GraphQLRequestError(result.errors);
      return result.data as never;
    },
    subscribe<R, V>(document: TypedDocumentNode<R, V>, variables?: V): AsyncIterableIterator<R> {
      ws ??= createWsClient({
        url: url.replace(/^http/, 'ws'),
        connectionParams: { 'x-api-key': apiKey },
        ...(webSocketImpl ? { webSocketImpl } : {}),
      });
      const results = ws.iterate({ query: print(document), variables: variables as Record<string, unknown> });
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
