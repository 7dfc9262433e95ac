import { operationIdOf, type RestRoute } from './route.js';

/**
 * The finishing of the OpenAPI document @fastify/swagger builds from the route table, for SDK
 * generators (openapi-typescript, openapi-generator, Kiota…) and Redocly's lint: a stable
 * `operationId` per operation, every schema with a `title` moved to `components.schemas` and
 * referenced, `servers`, described tags, each error status described once in
 * `components.responses` and referenced where it can happen, and the examples recorded from a
 * sandbox run (scripts/openapi/record-examples.ts) on parameters, bodies and answers.
 *
 * Documentation only: the routes' own schemas, which validate and serialize, are not touched; the
 * error statuses listed here that a route does not declare to Fastify (409, 413, 422, 503) stay
 * undeclared there, so their bodies are serialized as before.
 */

type Json = Record<string, any>;

/** A request and its answer from the sandbox run, ids and times normalised. */
export interface RecordedExchange {
  request: {
    params?: Record<string, unknown>;
    query?: Record<string, unknown>;
    headers?: Record<string, string>;
    body?: unknown;
  };
  response: { status: number; body: unknown };
}

export interface RecordedExamples {
  /** By operationId: one successful call of each operation. */
  operations: Record<string, RecordedExchange>;
  /** By error response name (`BadRequest`, `NotFound`…): one answer of that kind. */
  errors: Record<string, RecordedExchange>;
}

export interface DocumentOptions {
  routes: RestRoute[];
  /** The gateway's public base URL (PUBLIC_URL, or http://localhost:PORT). */
  serverUrl: string;
  examples: RecordedExamples;
}

/** Every tag of the route table, in the order the docs show them, each with what it groups. */
export const TAGS: Array<{ name: string; description: string }> = [
  { name: 'Service', description: 'The API root: the service, its version and where its other surfaces are.' },
  { name: 'Account', description: 'The user an API key or access token acts for.' },
  {
    name: 'API keys',
    description:
      "The caller's API keys: list, create (the secret is shown once) and revoke. See docs/authentication.md.",
  },
  {
    name: 'GraphQL access',
    description:
      "A key's or Connect app's GraphQL settings: trusted documents only (other documents refused with 403 PERSISTED_QUERY_NOT_ALLOWED), its own cost and depth limits, an app's browser origins. REST routes are not held to them. See docs/graphql.md.",
  },
  {
    name: 'Events',
    description:
      "The caller's event feed (wallet, bill, offramp and Solana changes) in order, the same events webhooks deliver.",
  },
  {
    name: 'Webhooks',
    description:
      'Webhook endpoints (Standard Webhooks signatures), their deliveries and attempts, secret rotation, test sends and resends. See docs/events.md.',
  },
  {
    name: 'Wallet',
    description: 'The NGN wallet: balances (available, held, total) and the ledger behind them. See docs/wallet.md.',
  },
  {
    name: 'Wallet deposits',
    description:
      'Money into the wallet: card (with PIN, OTP or 3-D Secure steps), bank transfer, USSD, payment link and the sandbox virtual-account transfer. Each honours Idempotency-Key.',
  },
  { name: 'Wallet account', description: 'The permanent virtual account that receives bank transfers for the wallet.' },
  {
    name: 'Wallet payouts',
    description:
      'Money out of the wallet: banks, account name lookup, withdrawals to a bank account and transfers to another user. Payout limits and cooling-off: docs/payout-controls.md.',
  },
  {
    name: 'Wallet statements',
    description: 'Balances at an instant and statements over a period, as JSON or CSV, from the ledger.',
  },
  { name: 'Payment methods', description: 'Saved cards and bank accounts, used by card deposits.' },
  {
    name: 'Transactions',
    description: 'Wallet transactions (deposits, withdrawals, transfers and bills), newest first, by id or reference.',
  },
  {
    name: 'Bills',
    description:
      'Airtime, mobile data, cable TV and electricity: the catalogue, customer validation, payments (each honours Idempotency-Key), schedules, records, receipts and saved beneficiaries. See docs/bills.md.',
  },
  {
    name: 'Offramp',
    description:
      'Crypto to fiat: assets, quotes, orders with a deposit address, payout banks and account verification, and the order ledger. See docs/offramp.md.',
  },
  {
    name: 'Solana wallet',
    description:
      "The caller's custodial Solana wallet: address, SOL and SPL balances, the portfolio, transfers and the sandbox faucet. See docs/solana.md.",
  },
  {
    name: 'EVM wallet',
    description:
      "The caller's custodial EVM wallet, one address on every EVM network: supported networks, native and ERC-20 balances, the token portfolio, and native and ERC-20 sends. See docs/evm.md.",
  },
  {
    name: 'EVM exchange',
    description:
      "Quotes on each EVM network's Uniswap V2 pools (native to ERC-20, ERC-20 to ERC-20, ERC-20 to native) and swaps executing a stored quote once: an exact approval, then Router02 with the minimum output enforced on chain. See docs/evm-exchange.md.",
  },
  {
    name: 'Portfolio',
    description:
      'One portfolio across the NGN wallet, Solana and every EVM network, valued in USD and NGN with each price’s source and age. See docs/evm-exchange.md.',
  },
  {
    name: 'Solana exchange',
    description:
      'Quotes and swaps between SOL and SPL tokens (the sandbox AMM; Jupiter in production). A quote is kept 30 seconds and swaps once.',
  },
  { name: 'Customers', description: "A business's own customers: create, list, read, update and disable." },
  { name: 'Audit trail', description: "What was done with the caller's credentials and account, newest first." },
  {
    name: 'Sandbox',
    description:
      "Test clocks: a sandbox account's own time, advanced on demand, with the work that falls due run on the way. See docs/sandbox.md#test-clocks.",
  },
];

/** One error status, described once and referenced by every operation where it can happen. */
interface ErrorResponse {
  status: number;
  description: string;
  schema: 'ErrorBody' | 'RateLimitError' | 'BillNotFoundError';
  retryAfter?: boolean;
}

export const ERROR_RESPONSES: Record<string, ErrorResponse> = {
  BadRequest: {
    status: 400,
    description:
      'Refused before anything happened: a path, query or body field missing, unknown, of the wrong type or out of range (`details` names each), a body that is not JSON, or a rule of the operation (`errorCode` INSUFFICIENT_FUNDS, QUOTE_EXPIRED).',
    schema: 'ErrorBody',
  },
  Unauthorized: {
    status: 401,
    description: 'No credential, or an API key or access token that is unknown, revoked or expired.',
    schema: 'ErrorBody',
  },
  Forbidden: {
    status: 403,
    description:
      "The credential lacks the permission level or scope the operation needs, the caller's IP is not on the key's allow-list (`errorCode` IP_NOT_ALLOWED), or a payout is over one of the key's amount limits (PAYOUT_LIMIT_EXCEEDED, with `limit`).",
    schema: 'ErrorBody',
  },
  NotFound: {
    status: 404,
    description: 'Nothing with this id or reference belongs to the caller (another tenant’s is not found either).',
    schema: 'ErrorBody',
  },
  BillNotFound: {
    status: 404,
    description: "No bill record with this reference belongs to the caller: the seed's bill-lookup body.",
    schema: 'BillNotFoundError',
  },
  Conflict: {
    status: 409,
    description:
      'Not now: a request with the same Idempotency-Key is still running (retry when it has finished), the reference or unique field is already used, the resource is not in a state that allows this, or, for swaps, the price moved beyond slippageBps (`errorCode` PRICE_MOVED).',
    schema: 'ErrorBody',
  },
  PayloadTooLarge: {
    status: 413,
    description: 'The request body is larger than this operation accepts.',
    schema: 'ErrorBody',
  },
  IdempotencyKeyReused: {
    status: 422,
    description:
      'This Idempotency-Key was first used with another body or operation (`errorCode` IDEMPOTENCY_KEY_REUSED). Use a new key for a new request.',
    schema: 'ErrorBody',
  },
  TooManyRequests: {
    status: 429,
    description:
      'Rate limited (per credential, per IP or per operation), or a payout over one of the key’s limits per window (`errorCode` PAYOUT_VELOCITY_EXCEEDED). Retry after `retryAfter` seconds (also the Retry-After header).',
    schema: 'RateLimitError',
    retryAfter: true,
  },
  InternalServerError: {
    status: 500,
    description: 'An unexpected error, logged with the request id (X-Request-Id). Nothing internal is in the body.',
    schema: 'ErrorBody',
  },
  ServiceUnavailable: {
    status: 503,
    description:
      'The database or a provider cannot be reached, the service is at capacity (`errorCode` BUSY), or a production key’s provider is not configured. Retry after Retry-After when it is sent.',
    schema: 'ErrorBody',
    retryAfter: true,
  },
};

/** Operations that answer a missing record with the seed's bill body instead of the general one. */
const BILL_LOOKUPS = new Set(['billRecord', 'billReceipt', 'billReceiptPage']);

/** Operations other than the value-moving ones that can answer 409 (a used reference, a state). */
const CONFLICTING = new Set([
  'cancelBillSchedule',
  'createBusinessCustomer',
  'updateBusinessCustomer',
  'authorizeDeposit',
  'createPaymentMethod',
]);

const FieldProblem = {
  type: 'object',
  required: ['field', 'message'],
  properties: {
    field: { type: 'string', description: 'The field at fault: a body, query or path field, or `body`.' },
    message: { type: 'string' },
  },
};

const LimitInfo = {
  type: 'object',
  required: ['name', 'value'],
  description: 'The limit that refused a payout: its name and value (kobo as a string, or a count).',
  properties: { name: { type: 'string' }, value: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
};

/** The error bodies, as error-mapping.ts writes them. */
const ERROR_SCHEMAS: Record<string, Json> = {
  ErrorBody: {
    title: 'ErrorBody',
    type: 'object',
    description: 'The general error body.',
    required: ['statusCode', 'message', 'error'],
    properties: {
      statusCode: { type: 'integer', description: 'The HTTP status, repeated.' },
      message: { type: 'string', description: 'A sentence; for bad input it names the field.' },
      error: { type: 'string', description: 'The HTTP status name, e.g. Unauthorized.' },
      details: { type: 'array', items: { $ref: '#/components/schemas/FieldProblem' } },
      errorCode: {
        type: 'string',
        description: 'For the errors a client branches on.',
        enum: [
          'INSUFFICIENT_FUNDS',
          'IDEMPOTENCY_KEY_REUSED',
          'QUOTE_EXPIRED',
          'PRICE_MOVED',
          'PAYOUT_LIMIT_EXCEEDED',
          'IP_NOT_ALLOWED',
          'BUSY',
        ],
      },
      limit: { $ref: '#/components/schemas/LimitInfo' },
    },
  },
  RateLimitError: {
    title: 'RateLimitError',
    type: 'object',
    description: 'The rate-limit body.',
    required: ['statusCode', 'message', 'retryAfter'],
    properties: {
      statusCode: { type: 'integer', description: 'Always 429.' },
      message: { type: 'string' },
      retryAfter: { type: 'integer', description: 'Seconds to wait.' },
      errorCode: { type: 'string', enum: ['PAYOUT_VELOCITY_EXCEEDED'], description: 'For a payout limit per window.' },
      limit: { $ref: '#/components/schemas/LimitInfo' },
    },
  },
  BillNotFoundError: {
    title: 'BillNotFoundError',
    type: 'object',
    description: "The seed's body for a bill reference the caller has no record of.",
    required: ['success', 'message', 'errorCode', 'reference'],
    properties: {
      success: { type: 'boolean', const: false },
      message: { type: 'string' },
      errorCode: { type: 'string', const: 'BILL_NOT_FOUND' },
      reference: { type: 'string', description: 'The reference asked for.' },
    },
  },
  FieldProblem,
  LimitInfo,
};

const RETRY_AFTER = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 1 },
};

/** The OpenAPI path of a route: `/api/v1/users/:id` → `/api/v1/users/{id}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** The document @fastify/swagger built, finished (a new object; `base` is not changed). */
export function finishDocument(base: Json, { routes, serverUrl, examples }: DocumentOptions): Json {
  const document = structuredClone(base) as Json;
  const byOperation = new Map(routes.map((route) => [`${route.method} ${openApiPath(route.path)}`, route]));
  const schemas = new Map<string, Json>(Object.entries(ERROR_SCHEMAS));
  const used = new Set<string>();
  const seenIds = new Set<string>();

  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const route = byOperation.get(`${method.toUpperCase()} ${path}`);
      if (!route) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} is not in the route table.`);
      const operationId = operationIdOf(route);
      if (seenIds.has(operationId)) throw new Error(`OpenAPI: operationId ${operationId} is used twice.`);
      seenIds.add(operationId);
      const finished: Json = { operationId, ...operation };
      const successStatus = String(route.status ?? (route.method === 'POST' ? 201 : 200));
      const success = finished.responses[successStatus];
      if (route.envelope !== false && !route.html && !route.csv) success.description = route.message;
      else if (success.description === 'Default Response') success.description = route.summary;
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
      const movesValue = (operation.parameters ?? []).some(
        (p: Json) => p.in === 'header' && p.name === 'idempotency-key',
      );
      const errors = [
        'BadRequest',
        ...(isPublic ? [] : ['Unauthorized', 'Forbidden']),
        BILL_LOOKUPS.has(operationId) ? 'BillNotFound' : 'NotFound',
        ...(movesValue || CONFLICTING.has(operationId) ? ['Conflict'] : []),
        ...(route.body ? ['PayloadTooLarge'] : []),
        ...(movesValue ? ['IdempotencyKeyReused'] : []),
        'TooManyRequests',
        'InternalServerError',
        'ServiceUnavailable',
      ];
      const responses: Json = { [successStatus]: success };
      for (const name of errors) {
        responses[String(ERROR_RESPONSES[name]!.status)] = { $ref: `#/components/responses/${name}` };
        used.add(name);
      }
      finished.responses = responses;
      for (const parameter of finished.parameters ?? []) {
        if (parameter.in === 'header' && parameter.name === 'idempotency-key') {
          // As the idempotency service checks it (the route's own header schema leaves that to the service).
          parameter.name = 'Idempotency-Key';
          parameter.schema = { ...parameter.schema, maxLength: 255 };
        }
      }
      hoistSchemas(finished, schemas);
      const example = examples.operations[operationId];
      if (example) addExamples(finished, example, successStatus, path, method, serverUrl);
      item[method] = finished;
    }
  }

  const responses: Json = {};
  for (const [name, error] of Object.entries(ERROR_RESPONSES)) {
    if (!used.has(name)) continue;
    const recorded = examples.errors[name];
    responses[name] = {
      description: error.description,
      ...(error.retryAfter ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
      content: {
        'application/json': {
          schema: { $ref: `#/components/schemas/${error.schema}` },
          ...(recorded
            ? { examples: { sandbox: { summary: 'Recorded in the sandbox', value: recorded.response.body } } }
            : {}),
        },
      },
    };
  }

  const tagNames = new Set(routes.map((route) => route.tag));
  for (const name of tagNames)
    if (!TAGS.some((tag) => tag.name === name)) throw new Error(`OpenAPI: tag ${name} has no description in TAGS.`);

  return {
    openapi: document.openapi,
    info: document.info,
    servers: [{ url: serverUrl, description: 'This gateway (PUBLIC_URL; http://localhost:4000 by default).' }],
    tags: TAGS.filter((tag) => tagNames.has(tag.name)),
    paths: document.paths,
    components: {
      ...document.components,
      schemas: Object.fromEntries([...schemas.entries()].sort(([a], [b]) => a.localeCompare(b))),
      responses,
    },
  };
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as Json)
            .sort()
            .map((k) => [k, (v as Json)[k]]),
        )
      : v,
  );

/** Replaces every schema with a `title` in the operation by a reference to it in `schemas`. */
function hoistSchemas(operation: Json, schemas: Map<string, Json>): void {
  const visit = (node: unknown, isSchema: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n, isSchema));
    if (node === null || typeof node !== 'object') return node;
    const object = node as Json;
    const copy: Json = {};
    for (const [key, value] of Object.entries(object)) {
      // Below `properties` (and `examples`) the keys are names or values, not keywords.
      if (key === 'properties' || key === 'patternProperties') {
        copy[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, visit(v, true)]));
      } else if (key === 'examples' || key === 'example' || key === 'enum' || key === 'const' || key === 'default') {
        copy[key] = value;
      } else copy[key] = visit(value, isSchema || key === 'schema' || key === 'items' || key === 'anyOf');
    }
    if (!isSchema || typeof copy.title !== 'string') return copy;
    const name = copy.title as string;
    const existing = schemas.get(name);
    if (existing && canonical(existing) !== canonical(copy))
      throw new Error(`OpenAPI: two different schemas are named ${name}; give one another title.`);
    schemas.set(name, copy);
    return { $ref: `#/components/schemas/${name}` };
  };
  for (const key of ['parameters', 'requestBody', 'responses'])
    if (operation[key] !== undefined) operation[key] = visit(operation[key], false);
}

function addExamples(
  operation: Json,
  example: RecordedExchange,
  successStatus: string,
  path: string,
  method: string,
  serverUrl: string,
): void {
  const { request, response } = example;
  for (const parameter of operation.parameters ?? []) {
    const value =
      parameter.in === 'path'
        ? request.params?.[parameter.name]
        : parameter.in === 'query'
          ? request.query?.[parameter.name]
          : parameter.in === 'header'
            ? request.headers?.[parameter.name.toLowerCase()]
            : undefined;
    if (value !== undefined) parameter.example = value;
  }
  const body = operation.requestBody?.content?.['application/json'];
  if (body && request.body !== undefined)
    body.examples = { sandbox: { summary: 'Recorded in the sandbox', value: request.body } };
  const success = operation.responses[successStatus];
  const [contentType] = Object.keys(success.content ?? {});
  if (contentType && response.status === Number(successStatus))
    success.content[contentType].examples = { sandbox: { summary: 'Recorded in the sandbox', value: response.body } };
  operation['x-codeSamples'] = [
    { lang: 'Shell', label: 'curl', source: curlOf(operation, request, path, method, serverUrl) },
  ];
}

/** The recorded request as a curl command, the key left as $KEY. */
function curlOf(
  operation: Json,
  request: RecordedExchange['request'],
  path: string,
  method: string,
  serverUrl: string,
): string {
  const filled = path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    encodeURIComponent(String(request.params?.[name] ?? `{${name}}`)),
  );
  const query = new URLSearchParams(
    Object.entries(request.query ?? {}).map(([k, v]) => [k, String(v)] as [string, string]),
  ).toString();
  const url = `${serverUrl}${filled}${query ? `?${query}` : ''}`;
  const lines = [`curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} '${url}'`];
  const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
  if (!isPublic) lines.push(`-H "X-API-KEY: $KEY"`);
  const key = request.headers?.['idempotency-key'];
  if (key) lines.push(`-H 'Idempotency-Key: ${key}'`);
  if (request.body !== undefined)
    lines.push(`-H 'content-type: application/json'`, `-d '${JSON.stringify(request.body).replaceAll("'", "'\\''")}'`);
  return lines.join(' \\\n  ');
}
