import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/rest.js';

/** Every path of REST v1 with its parameters, bodies and answers (generated from clients/openapi.json). */
export type { paths as RestPaths };
/** The named schemas of REST v1: `RestSchemas['BillRecord']`, `RestSchemas['DepositResult']`… */
export type RestSchemas = components['schemas'];
export type RestClient = Client<paths>;

export interface RestClientOptions {
  /** The gateway's base URL, e.g. http://localhost:4000. */
  baseUrl: string;
  /** An API key (X-API-KEY) or, with `bearer`, an OAuth access token. */
  apiKey: string;
  bearer?: boolean;
  /** Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
}

/**
 * A typed REST v1 client (openapi-fetch): `client.GET('/api/v1/wallet/balance')`,
 * `client.POST('/api/v1/bills/buy-airtime', { body, params: { header: { 'Idempotency-Key': key } } })`.
 * Each call resolves to `{ data }` on success or `{ error }` with the error body, never throws for
 * an HTTP status.
 */
export function createRestClient({ baseUrl, apiKey, bearer = false, fetch }: RestClientOptions): RestClient {
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: bearer ? { authorization: `Bearer ${apiKey}` } : { 'x-api-key': apiKey },
    ...(fetch ? { fetch } : {}),
  });
}
