import { type StringOptions, Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { expectedUrl, type UrlKind } from './config-urls.js';
import { problemLines } from './config-problems.js';
import { upstreamProblems } from './config-upstream.js';

/** A URL-valued variable: parsed as a URL of its kind's schemes (config-urls.ts registers the formats). */
const url = (kind: UrlKind, options: StringOptions = {}) =>
  Type.String({ format: kind, expected: expectedUrl(kind), ...options });

/**
 * Every setting the gateway reads, in one typed object. Parsed once at start; a bad value stops
 * the process with a message naming the variable and what it must be (never the value: it may be a
 * secret), rather than failing later mid-request.
 */
const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  HOST: Type.String({ default: '0.0.0.0' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 4000 }),
  PUBLIC_URL: Type.Optional(url('http-url')),
  /**
   * `service`: this gateway is the REST v1 service (its own database holds users, keys and money).
   * `facade`: it fronts an existing REST v1 deployment of the spec at UPSTREAM_URL, which holds
   * every balance, record and key (docs/facade.md).
   */
  GATEWAY_MODE: Type.Union([Type.Literal('service'), Type.Literal('facade')], { default: 'service' }),
  /** The REST v1 deployment a facade fronts: its base URL, `/api/v1/...` is appended. Required in facade mode. */
  UPSTREAM_URL: Type.Optional(url('http-url')),
  /** Deadline of each call to the upstream, from sending to the response's headers (and between body chunks). */
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 }),
  /**
   * One deadline for all the upstream calls of one GraphQL request, from when its caller is known:
   * each call gets what remains of it (at most UPSTREAM_TIMEOUT_MS), none is sent once it has passed.
   */
  UPSTREAM_REQUEST_DEADLINE_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 20_000 }),
  /** Upstream calls one GraphQL operation may make at worst: an operation whose worst case is more is refused before any. */
  UPSTREAM_CALL_BUDGET: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /** Upstream calls per partner credential per minute, counted up front at each operation's worst case (across instances with REDIS_URL). */
  UPSTREAM_CALLS_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  /**
   * UPSTREAM_URL may name (or resolve to) a private, loopback or link-local address, and use http.
   * Default: on, except in production, where such an upstream is refused unless this is set.
   */
  UPSTREAM_PRIVATE_ADDRESSES: Type.Optional(Type.Boolean()),
  /**
   * Where a facade asks the operations the spec only names (mobile data, cable TV): `gateway`, at
   * this gateway's own REST paths (an upstream that is another Partner Gateway serves them), or
   * `spec`, nowhere: the graph a facade serves leaves them out (docs/facade.md).
   */
  UPSTREAM_ROUTES: Type.Union([Type.Literal('gateway'), Type.Literal('spec')], { default: 'gateway' }),
  /**
   * The environment a facade's callers act in, for its own records (events, webhook endpoints):
   * `production`, or `sandbox` in front of the spec's development deployment, whose webhook
   * endpoints follow the sandbox rules (local http receivers while WEBHOOK_LOCAL_RECEIVERS is on).
   */
  UPSTREAM_ENVIRONMENT: Type.Union([Type.Literal('production'), Type.Literal('sandbox')], { default: 'production' }),
  /**
   * The mutations whose upstream honours `Idempotency-Key` (a retry of one whose outcome is unknown
   * is forwarded with the same key): `all`, `none`, or a comma-separated list of the route map's
   * operation names (domain/facade/upstream-routes.ts). Default: `all` with UPSTREAM_ROUTES=gateway
   * (another Partner Gateway honours keys), `none` with `spec` (the spec says nothing of the header).
   */
  UPSTREAM_KEYED_ROUTES: Type.Optional(Type.String({ minLength: 1 })),
  /** How often the matcher looks upstream for a mutation whose outcome is unknown. */
  UPSTREAM_MATCH_EVERY_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  /** How long the matcher looks before the mutation goes to the operator queue. */
  UPSTREAM_MATCH_WINDOW_MS: Type.Integer({ minimum: 100, default: 900_000 }),
  /**
   * How often a facade's gap-filling job lists each partner account's records upstream for the
   * changes its webhooks did not bring (docs/facade.md#the-gap-filling-job).
   */
  FACADE_GAP_FILL_EVERY_MS: Type.Integer({ minimum: 10_000, default: 15 * 60_000 }),
  DATABASE_URL: Type.Optional(url('postgres-url')),
  /** PostgreSQL session limits of every application connection (ms; 0 = off): a stuck statement or transaction cannot hold locks for everyone. */
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  DATABASE_LOCK_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  /**
   * PostgreSQL connections per pool: requests (every mutation, so every money movement, lookups
   * and authentication), reads (list pages and searches) and jobs (job runner, schedules, watches;
   * the event relay has a connection of its own). Separate pools keep a flood of slow lists or a
   * job backlog from taking the connections a transfer needs. 0 for reads or jobs shares the
   * request pool.
   */
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, default: 10 }),
  DATABASE_READ_POOL_SIZE: Type.Integer({ minimum: 0, default: 5 }),
  DATABASE_JOB_POOL_SIZE: Type.Integer({ minimum: 0, default: 5 }),
  /** How long a request waits for a pooled PostgreSQL connection (free or new) before it is answered 503. */
  DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /**
   * The tables' owner, when DATABASE_URL names a separate application role: start-up migrates
   * through this URL, then grants DATABASE_URL's role its rights (no UPDATE, DELETE or TRUNCATE on
   * posted ledger rows). See docs/operations.md.
   */
  DATABASE_MIGRATION_URL: Type.Optional(url('postgres-url')),
  /** Directory of the embedded PGlite database, used when DATABASE_URL is unset. `memory://` keeps it in RAM. */
  PGLITE_DATA_DIR: Type.String({ default: './data/pglite' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** Seconds an authenticated API key is trusted from cache; bounds how fast a revocation bites. */
  API_KEY_CACHE_MS: Type.Integer({ minimum: 0, maximum: 1000, default: 1000 }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  /**
   * How far the heap grows past what a full garbage collection kept before the next one, in percent
   * (V8's `--heap-growing-percent`); 0 leaves V8's own choice. See gc-tuning.ts.
   */
  GC_HEAP_GROWING_PERCENT: Type.Integer({ minimum: 0, maximum: 400, default: 100 }),
  /** Create a demo user when the database has no users; the first start that listens prints its sandbox key. Default: on, except in production (never there). */
  SEED_DEMO: Type.Optional(Type.Boolean()),
  /** Run background workers (event relay, job runner) in this process. */
  WORKERS: Type.Boolean({ default: true }),
  /** Apply pending database migrations at start. Off when a release step runs `npm run migrate` first. */
  MIGRATE_ON_START: Type.Boolean({ default: true }),
  /** Serve /metrics on this port (and METRICS_HOST) instead of the API port. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  METRICS_HOST: Type.String({ default: '127.0.0.1' }),
  /** Without METRICS_PORT: /metrics on the API port needs `Authorization: Bearer <METRICS_TOKEN>`; in production, no token means no /metrics there. */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** OTLP/HTTP collector for traces (the standard variables). Unset: no spans are made or sent. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(url('http-url')),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(url('http-url')),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, default: 'partner-gateway' }),
  /** From the signal to exit: readiness window, HTTP drain, jobs, pools. Past it the process exits with code 1. */
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  /**
   * After SIGTERM, how long /readyz answers 503 (and responses say Connection: close) while the
   * listener still serves, so a load balancer stops sending before connections are refused.
   * Default: 5000 in production, 0 otherwise.
   */
  SHUTDOWN_READINESS_DELAY_MS: Type.Optional(Type.Integer({ minimum: 0 })),
  /** How long a worker's claim on a job lasts; a worker that dies loses its jobs to others after this. Keep above the 10 s webhook deadline. */
  JOB_LEASE_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  /**
   * How long an Idempotency-Key claim lasts while its request runs, including across the provider
   * call of a deposit, deposit step, bill or payout (the one lease of every keyed operation). A
   * request whose process died, or that failed between its two commits, holds its key this long
   * (retries get 409), then the next retry finishes its record or re-runs it.
   */
  IDEMPOTENCY_LEASE_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  /**
   * Calls to one provider in flight at once per process (the provider's bulkhead, shared by every
   * call to the provider of that name): a payout, bill payment, deposit or deposit step takes a place
   * before its first commit (before any key is claimed or money held) and gives it back when the
   * provider has answered; their reconciliation and status polls take places too. No database
   * connection is held meanwhile, so this bounds what a slow provider holds, not the pool.
   */
  PROVIDER_CONCURRENCY: Type.Integer({ minimum: 1, default: 64 }),
  /** The same for the sandbox providers (in-process, nothing behind them to protect): room for bursts of slow sandbox payouts, bills and deposits. */
  PROVIDER_CONCURRENCY_SANDBOX: Type.Integer({ minimum: 1, default: 500 }),
  /** How long a call waits for a place in its provider's bulkhead before it is answered 503 BUSY with Retry-After. */
  PROVIDER_QUEUE_WAIT_MS: Type.Integer({ minimum: 0, maximum: 10_000, default: 500 }),
  /** Jobs running at once per process, per lane: money (settlement, payouts, bills, Solana), webhooks, polling (reconciliation). */
  JOB_CONCURRENCY_MONEY: Type.Integer({ minimum: 1, default: 16 }),
  JOB_CONCURRENCY_WEBHOOKS: Type.Integer({ minimum: 1, default: 32 }),
  JOB_CONCURRENCY_POLLING: Type.Integer({ minimum: 1, default: 8 }),
  /** Share of a lane one tenant may hold at once, as a fraction of the lane's concurrency (at least one job). */
  JOB_TENANT_SHARE: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.25 }),
  /** Deliveries to one webhook endpoint in flight at once, per process. */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: Type.Integer({ minimum: 1, default: 4 }),
  /** An endpoint whose every attempt failed for this long is disabled (Stripe and Svix: days). */
  WEBHOOK_DISABLE_AFTER_MS: Type.Integer({ minimum: 60_000, default: 5 * 24 * 3_600_000 }),
  /**
   * Development setting: sandbox webhook endpoints may be http and local addresses. Default: on,
   * except in production, where it may not be turned on (every key follows the outbound rules).
   */
  WEBHOOK_LOCAL_RECEIVERS: Type.Optional(Type.Boolean()),
  /** Pending background jobs one tenant may have; requests that would queue more answer 429. */
  TENANT_PENDING_JOBS_MAX: Type.Integer({ minimum: 1, default: 50_000 }),
  /** Retention (see docs): days events (and their webhook deliveries and attempts) are kept; at least 30. */
  RETENTION_EVENTS_DAYS: Type.Integer({ minimum: 30, default: 30 }),
  /** Days finished (done or failed) jobs are kept. */
  RETENTION_JOBS_DAYS: Type.Integer({ minimum: 1, default: 7 }),
  /** Hours an Idempotency-Key is remembered; at least 24 (the Stripe rule). */
  RETENTION_IDEMPOTENCY_HOURS: Type.Integer({ minimum: 24, default: 24 }),
  /** Days the state history of a finished operation is kept after it finished; at least 30. */
  RETENTION_HISTORY_DAYS: Type.Integer({ minimum: 30, default: 90 }),
  /** Days a sandbox chain remembers a signature it executed (a replay within them is refused). */
  RETENTION_SANDBOX_SIGNATURES_DAYS: Type.Integer({ minimum: 1, default: 7 }),
  /** Rows deleted per statement: each batch is its own short transaction. */
  RETENTION_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
  /** How often the pruning job runs. */
  RETENTION_EVERY_MS: Type.Integer({ minimum: 60_000, default: 3_600_000 }),
  /** How often the ledger invariant check runs (docs/operations.md). */
  LEDGER_CHECK_EVERY_MINUTES: Type.Integer({ minimum: 1, default: 60 }),
  /** Hours between scheduled reconciliation runs (each reconciles the previous UTC day; docs/reconciliation.md). */
  RECON_EVERY_HOURS: Type.Integer({ minimum: 1, default: 24 }),
  /** Environments the scheduled run reconciles, comma-separated (sandbox providers forget on restart). */
  RECON_ENVIRONMENTS: Type.String({
    pattern: '^(sandbox|production)(,(sandbox|production))*$',
    default: 'production',
    expected: 'sandbox, production or both, comma-separated',
  }),
  /** Hours after a day ends by which each provider's clearing must net to zero. */
  RECON_SETTLEMENT_HOURS: Type.Integer({ minimum: 0, default: 48 }),
  /** Per-provider overrides of RECON_SETTLEMENT_HOURS, e.g. `flutterwave=24,paycrest=2`. */
  RECON_SETTLEMENT_HOURS_BY_PROVIDER: Type.String({
    pattern: '^([a-z-]+=\\d+(,[a-z-]+=\\d+)*)?$',
    default: '',
    expected: 'provider=hours pairs, comma-separated (flutterwave=24,paycrest=2)',
  }),
  /** An open break older than this many hours counts as aged (metric and notice). */
  RECON_BREAK_MAX_AGE_HOURS: Type.Integer({ minimum: 1, default: 72 }),
  /** Bearer token for the operator pages (/operator/…); unset, they are off (404). */
  OPERATOR_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** A bank account added this recently receives payouts of at most PAYOUT_COOLING_OFF_CAP_KOBO (0 turns the control off). */
  PAYOUT_COOLING_OFF_MINUTES: Type.Integer({ minimum: 0, default: 1440 }),
  PAYOUT_COOLING_OFF_CAP_KOBO: Type.Integer({ minimum: 0, default: 1_000_000 }),
  /** Production always; true applies the cooling-off to sandbox payouts too (to rehearse it). */
  PAYOUT_COOLING_OFF_SANDBOX: Type.Boolean({ default: false }),
  /**
   * Per-key payout limits' defaults (docs/payout-controls.md), for keys without their own value;
   * 0 means no limit. Rolling windows: the day is the last 24 hours, the hour the last 60 minutes.
   */
  PAYOUT_LIMIT_PER_PAYOUT_KOBO: Type.Integer({ minimum: 0, default: 500_000_000 }),
  PAYOUT_LIMIT_DAILY_KOBO: Type.Integer({ minimum: 0, default: 2_000_000_000 }),
  PAYOUT_LIMIT_DAILY_COUNT: Type.Integer({ minimum: 0, default: 500 }),
  PAYOUT_LIMIT_HOURLY_COUNT: Type.Integer({ minimum: 0, default: 100 }),
  /** Production keys always get the defaults above; true gives them to sandbox keys too. A key's own limits apply in both. */
  PAYOUT_LIMITS_SANDBOX: Type.Boolean({ default: false }),
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (IP allow-lists, per-IP
   * limits, audit records): unset or `false` none, `true` any, a hop count, or comma-separated
   * addresses and CIDRs of the proxies.
   */
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  /** Redis for limits shared by every instance. Unset: limits are per process, in memory. */
  REDIS_URL: Type.Optional(url('redis-url')),
  /** Operations (GraphQL root fields, aliases included) per credential per minute. */
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  /** Requests per IP per minute to public operations, and failed authentications per IP per minute. */
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  /** POST /connect/token (and /connect/revoke): requests per minute, per client and per IP (the seed says 10). */
  CONNECT_TOKEN_PER_MINUTE: Type.Integer({ minimum: 1, default: 10 }),
  /** GET and POST /connect/authorize: requests per minute each, per client and per IP (the seed says 20). */
  CONNECT_AUTHORIZE_PER_MINUTE: Type.Integer({ minimum: 1, default: 20 }),
  /** Largest JSON body a REST v1 route accepts, unless the route says otherwise. */
  REST_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 65_536 }),
  GRAPHQL_MAX_DEPTH: Type.Integer({ minimum: 1, default: 10 }),
  GRAPHQL_MAX_ALIASES: Type.Integer({ minimum: 1, default: 15 }),
  GRAPHQL_MAX_COST: Type.Integer({ minimum: 1, default: 5000 }),
  GRAPHQL_MAX_TOKENS: Type.Integer({ minimum: 1, default: 2000 }),
  GRAPHQL_MAX_DIRECTIVES: Type.Integer({ minimum: 1, default: 50 }),
  /** Introspection and "did you mean" hints. Default: on unless NODE_ENV=production. */
  GRAPHQL_INTROSPECTION: Type.Optional(Type.Boolean()),
  /** Accept arrays of operations in one POST /graphql. Off: each operation is its own request (and its own limits). */
  GRAPHQL_BATCHING: Type.Boolean({ default: false }),
  /** The GraphiQL page at GET /graphql. Default: on unless NODE_ENV=production. */
  GRAPHQL_EXPLORER: Type.Optional(Type.Boolean()),
  /** Stack traces in GraphQL errors (`extensions.stacktrace`), for debugging the server itself. Never in production. */
  GRAPHQL_STACK_TRACES: Type.Boolean({ default: false }),
  /** Shared secret the federation router sends as X-Router-Secret; in production _service and _entities need it. */
  ROUTER_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /** Comma-separated origins allowed by CORS (partner frontends), or * for any. Unset: no CORS. */
  CORS_ORIGINS: Type.Optional(Type.String()),
  /** 32 bytes, base64: seals webhook signing secrets at rest. Required in production. */
  SECRETS_KEY: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9+/]{43}=$',
      expected: '32 bytes, base64: 44 characters (openssl rand -base64 32)',
    }),
  ),
  /** Flutterwave v4 OAuth client: the production NGN wallet. Unset: production wallet routes answer 503. */
  FLUTTERWAVE_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  FLUTTERWAVE_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  /** Base64 AES-256 key from the Flutterwave dashboard: card and PIN fields are encrypted with it. */
  FLUTTERWAVE_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** The dashboard's webhook secret hash: verifies `flutterwave-signature` / `verif-hash`. */
  FLUTTERWAVE_SECRET_HASH: Type.Optional(Type.String({ minLength: 1 })),
  FLUTTERWAVE_BASE_URL: url('http-url', { default: 'https://api.flutterwave.com/v4' }),
  FLUTTERWAVE_TOKEN_URL: url('http-url', {
    default: 'https://idp.flutterwave.com/realms/flutterwave/protocol/openid-connect/token',
  }),
  /** v3 secret key, only for hosted payment links (v3 Standard). */
  FLUTTERWAVE_V3_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  FLUTTERWAVE_V3_BASE_URL: url('http-url', { default: 'https://api.flutterwave.com/v3' }),
  /**
   * Master keys wrapping custodial Solana keys, per environment: comma-separated version:base64
   * (32 bytes each; the highest version wraps new keys). Sandbox falls back to a development key
   * outside production; production wallets need theirs.
   */
  SOLANA_MASTER_KEYS_SANDBOX: Type.Optional(Type.String({ minLength: 1 })),
  SOLANA_MASTER_KEYS_PRODUCTION: Type.Optional(Type.String({ minLength: 1 })),
  /** Paycrest Sender API key: production offramp. Unset: production offramp answers 503. */
  PAYCREST_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Paycrest API secret: verifies its webhooks (X-Paycrest-Signature). */
  PAYCREST_API_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  PAYCREST_BASE_URL: url('http-url', { default: 'https://api.paycrest.io' }),
  /** Solana JSON-RPC URLs of production networks. Unset: that network answers 503 in production (sandbox runs its own chains). */
  SOLANA_RPC_URL_MAINNET_BETA: Type.Optional(url('http-url')),
  SOLANA_RPC_URL_DEVNET: Type.Optional(url('http-url')),
  SOLANA_RPC_URL_TESTNET: Type.Optional(url('http-url')),
  /** How long a transfer request waits for confirmation before answering with the signature anyway. */
  SOLANA_CONFIRM_WAIT_MS: Type.Integer({ minimum: 0, maximum: 30_000, default: 3_000 }),
  /** Jupiter Swap API (production swaps and quotes) and Price API; the key is optional (keyless is rate limited). */
  JUPITER_BASE_URL: url('http-url', { default: 'https://api.jup.ag/swap/v1' }),
  JUPITER_PRICE_URL: url('http-url', { default: 'https://api.jup.ag/price/v3' }),
  JUPITER_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** SMTP server for account mail (verification, password reset): smtp:// or smtps://, credentials in the URL. */
  SMTP_URL: Type.Optional(url('smtp-url')),
  /**
   * HMAC key of Idempotency-Key request fingerprints (at least 32 characters). Unset: derived from
   * SECRETS_KEY (which production requires), or a fixed development key outside production.
   */
  IDEMPOTENCY_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  MAIL_FROM: Type.String({ minLength: 3, default: 'Partner Gateway <no-reply@partner-gateway.local>' }),
});

export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Parses environment variables into a Config, or throws a ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw));
  const merged = { ...(converted as object), ...overrides };
  const errors = [...Value.Errors(ConfigSchema, merged)];
  if (errors.length > 0) {
    throw new ConfigError(`Invalid configuration:\n${problemLines(errors).join('\n')}`);
  }
  const config = merged as Config;
  const production = config.NODE_ENV === 'production';
  if (production && !config.SECRETS_KEY) {
    throw new ConfigError(
      'Invalid configuration:\n  SECRETS_KEY: required in production (32 random bytes, base64: `openssl rand -base64 32`)',
    );
  }
  if (config.FLUTTERWAVE_CLIENT_ID) {
    const missing = (
      ['FLUTTERWAVE_CLIENT_SECRET', 'FLUTTERWAVE_ENCRYPTION_KEY', 'FLUTTERWAVE_SECRET_HASH'] as const
    ).filter((k) => !config[k]);
    if (missing.length)
      throw new ConfigError(
        `Invalid configuration:\n${missing.map((k) => `  ${k}: required with FLUTTERWAVE_CLIENT_ID`).join('\n')}`,
      );
  }
  if (config.FLUTTERWAVE_V3_SECRET_KEY && !config.FLUTTERWAVE_SECRET_HASH) {
    throw new ConfigError(
      'Invalid configuration:\n  FLUTTERWAVE_SECRET_HASH: required with FLUTTERWAVE_V3_SECRET_KEY (it verifies bill webhooks)',
    );
  }
  if (config.PAYCREST_API_KEY && !config.PAYCREST_API_SECRET) {
    throw new ConfigError(
      "Invalid configuration:\n  PAYCREST_API_SECRET: required with PAYCREST_API_KEY (it verifies Paycrest's webhooks)",
    );
  }
  const upstream = upstreamProblems(config);
  if (upstream.length) throw new ConfigError(`Invalid configuration:\n${upstream.join('\n')}`);
  config.UPSTREAM_PRIVATE_ADDRESSES ??= !production;
  config.SHUTDOWN_READINESS_DELAY_MS ??= production ? 5_000 : 0;
  if (production && (config.SEED_DEMO || config.WEBHOOK_LOCAL_RECEIVERS || config.GRAPHQL_STACK_TRACES)) {
    const names = (['SEED_DEMO', 'WEBHOOK_LOCAL_RECEIVERS', 'GRAPHQL_STACK_TRACES'] as const).filter((k) => config[k]);
    throw new ConfigError(
      `Invalid configuration:\n${names.map((k) => `  ${k}: may not be on in production (a development setting)`).join('\n')}`,
    );
  }
  // A facade's keys live upstream: a demo user of its own would have no key the upstream knows.
  config.SEED_DEMO ??= !production && config.GATEWAY_MODE === 'service';
  config.WEBHOOK_LOCAL_RECEIVERS ??= !production;
  config.GRAPHQL_INTROSPECTION ??= !production;
  config.GRAPHQL_EXPLORER ??= !production;
  return config;
}

export const isProduction = (config: Config) => config.NODE_ENV === 'production';

/** True when this gateway fronts an upstream REST v1 deployment (docs/facade.md). */
export const isFacade = (config: Config) => config.GATEWAY_MODE === 'facade';

/** Where traces go: the traces endpoint as given, or `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`, or nowhere. */
export const otlpTracesUrlOf = (config: Config) =>
  config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
  (config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`
    : undefined);

/**
 * What is wrong with the public URL a production server would use, if anything: unset, links in
 * mail and the OAuth issuer say `http://localhost`, and every strict OAuth client's discovery
 * fails. Said at start (a warning) and by `admin doctor`; not refused, since a gateway reached
 * only through a federation router sends neither mail links nor Connect.
 */
export function publicUrlProblem(config: Config): string | undefined {
  if (!isProduction(config) || config.PUBLIC_URL) return undefined;
  return `PUBLIC_URL is not set: mail links and the OAuth issuer say ${publicUrlOf(config)}, which no partner can reach. Set PUBLIC_URL to the gateway's public https address (docs/connect.md#discovery-and-the-issuer).`;
}

/** The base URL people and apps reach this gateway at: links in mail, the OAuth issuer. */
export const publicUrlOf = (config: Config) =>
  (config.PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
