import { type Config, publicUrlOf } from './config.js';
import type { Database } from './db/client.js';
import { AccountLists } from './domain/activity/account-lists.js';
import { RecordLookups } from './domain/activity/record-lookups.js';
import { ApiKeyService } from './domain/auth/api-key-service.js';
import type { Clock } from './domain/clock.js';
import { Doorbell } from './domain/events/doorbell.js';
import { EventFeed } from './domain/events/event-feed.js';
import { EventTriggerService } from './domain/sandbox/event-trigger-service.js';
import { TestClocks } from './domain/sandbox/test-clocks.js';
import { TestClockService } from './domain/sandbox/test-clock-service.js';
import { EventService } from './domain/events/event-service.js';
import { type LimitRule, RateLimiter } from './domain/limits/rate-limiter.js';
import { OfframpService } from './domain/offramp/offramp-service.js';
import { PaycrestProvider } from './domain/offramp/paycrest-provider.js';
import { SANDBOX_OFFRAMP, SandboxOfframpProvider } from './domain/offramp/sandbox-offramp-provider.js';
import { UserService } from './domain/users/user-service.js';
import type { UserDirectory } from './domain/users/user-directory.js';
import { RestV1Upstream } from './domain/facade/rest-v1-upstream.js';
import { UpstreamBounds } from './domain/facade/upstream-bounds.js';
import { UpstreamWaits } from './domain/facade/upstream-waits.js';
import { UpstreamUserDirectory } from './domain/facade/upstream-user-directory.js';
import { UpstreamBills } from './domain/facade/upstream-bills.js';
import { keyedRoutesOf, routeMapOf } from './domain/facade/upstream-routes.js';
import { FacadeKeys } from './domain/facade/facade-keys.js';
import { KeyMatcher } from './domain/facade/key-matcher.js';
import { UnknownOutcomes } from './domain/facade/operator-queue.js';
import { InboundWebhooks } from './domain/facade/inbound-webhooks.js';
import { LocalOwners, localOwnerId } from './domain/facade/inbound-owners.js';
import { UpstreamEventLog } from './domain/facade/upstream-event-log.js';
import type { BillsDomain } from './domain/bills/bills-domain.js';
import { localBills } from './domain/bills/local-bills.js';
import { localOfframp, type OfframpDomain } from './domain/offramp/offramp-domain.js';
import { localSolanaWallet, type SolanaWalletDomain } from './domain/solana/solana-wallet-domain.js';
import { UpstreamOfframp } from './domain/facade/upstream-offramp.js';
import { UpstreamSolanaWallet } from './domain/facade/upstream-solana-wallet.js';
import { UpstreamEvmWallet } from './domain/facade/upstream-evm-wallet.js';
import { type EvmWalletDomain, localEvmWallet } from './domain/evm/evm-wallet-domain.js';
import { UpstreamSwapQuotes } from './domain/facade/upstream-swap-quotes.js';
import { localSwapQuotes, type SwapQuotesDomain } from './domain/solana/swap-quotes-domain.js';
import { type DepositsDomain, localDeposits } from './domain/wallet/deposits-domain.js';
import { UpstreamDeposits } from './domain/facade/upstream-deposits.js';
import { type CustomersDomain, localCustomers } from './domain/customers/customers-domain.js';
import { UpstreamCustomers } from './domain/facade/upstream-customers.js';
import type { Environment } from './domain/auth/permissions.js';
import { DomainError } from './domain/errors.js';
import { Idempotency } from './domain/idempotency/idempotency.js';
import { FlutterwaveProvider } from './domain/payments/flutterwave-provider.js';
import { withCachedBanks } from './domain/payments/cached-banks.js';
import type { PaymentsProvider } from './domain/payments/payments-provider.js';
import { SandboxPaymentsProvider, UnconfiguredPaymentsProvider } from './domain/payments/sandbox-payments-provider.js';
import { BillsService } from './domain/bills/bills-service.js';
import { parseSettlementHours, Reconciliation } from './domain/reconciliation/reconciliation-service.js';
import { reconciliationSources } from './domain/reconciliation/wiring.js';
import { sandboxMarketMakers } from './domain/solana/sandbox-market-makers.js';
import { sandboxLedgerPoster } from './domain/solana/sandbox-ledger.js';
import { sandboxLedgerBalances } from './domain/solana/sandbox-ledger-balances.js';
import type { BillsProvider } from './domain/bills/bills-provider.js';
import { SandboxBillsProvider } from './domain/bills/sandbox-bills-provider.js';
import { FlutterwaveBillsProvider } from './domain/bills/flutterwave-bills-provider.js';
import { DepositService } from './domain/wallet/deposit-service.js';
import { CustodialWallets } from './domain/solana/custodial-wallets.js';
import { MasterKeyring } from './domain/chain/keyring.js';
import { CustomerService } from './domain/customers/customer-service.js';
import { PaymentMethodService } from './domain/wallet/payment-method-service.js';
import { PayoutService } from './domain/wallet/payout-service.js';
import { Bulkheads } from './domain/upstream/bulkhead.js';
import { KeyControlsService } from './domain/auth/key-controls.js';
import { GraphQLAccessService } from './domain/graphql-access/graphql-access-service.js';
import { PayoutControls, payoutLimitDefaultsOf } from './domain/payouts/payout-limits.js';
import { WalletService } from './domain/wallet/wallet-service.js';
import { SecretBox } from './domain/webhooks/secret-box.js';
import { TenantBacklog } from './domain/jobs/backlog.js';
import { WebhookService } from './domain/webhooks/webhook-service.js';
import { pino } from 'pino';
import { DependencyHealth } from './health/dependency-health.js';
import { AccountService } from './domain/accounts/account-service.js';
import { type Mailer, SmtpMailer } from './domain/accounts/mailer.js';
import { AuthorizationServer } from './domain/connect/authorization-server.js';
import { ClientRegistry } from './domain/connect/client-registry.js';
import { SolanaExchange } from './domain/solana/exchange-service.js';
import { incomingTransferRecorder, sandboxExecutionRecorder } from './domain/solana/incoming-transfers.js';
import { IncomingWatch } from './domain/solana/incoming-watch.js';
import { JupiterProvider } from './domain/solana/jupiter-provider.js';
import { LiteSvmChain } from './domain/solana/litesvm-chain.js';
import { SOLANA_NETWORKS, type SolanaNetwork } from './domain/solana/networks.js';
import { SolanaPortfolio } from './domain/solana/portfolio.js';
import { RpcChain } from './domain/solana/rpc-chain.js';
import { SandboxAmm } from './domain/solana/sandbox-amm.js';
import { SandboxChainStore } from './domain/solana/sandbox-chain-store.js';
import { SandboxFaucet } from './domain/solana/sandbox-faucet.js';
import { createSandboxWorld, SANDBOX_TOKENS, upgradeSandboxWorld } from './domain/solana/sandbox-world.js';
import { SolanaChains } from './domain/solana/solana-chains.js';
import { TokenDirectory } from './domain/solana/token-directory.js';
import { ChainFamilies } from './domain/chain/registry.js';
import { EvmChains } from './domain/evm/evm-chains.js';
import { evmFamily } from './domain/evm/evm-family.js';
import { EvmIncoming } from './domain/evm/evm-incoming.js';
import { EvmReads } from './domain/evm/evm-reads.js';
import { EvmTransfers } from './domain/evm/evm-transfers.js';
import { EvmSandboxFaucet } from './domain/evm/evm-faucet.js';
import { EvmExchange } from './domain/evm/evm-exchange.js';
import { evmPortfolioSource } from './domain/evm/evm-portfolio-source.js';
import { ngnWalletSource, Portfolio } from './domain/portfolio/portfolio.js';
import { solanaPortfolioSource } from './domain/solana/solana-portfolio-source.js';
import { sandboxUniswap } from './domain/evm/sandbox-uniswap.js';
import { evmSandboxMarketMakers } from './domain/evm/sandbox-market-makers.js';
import { EVM_NETWORKS } from './domain/evm/networks.js';
import { EvmWallets } from './domain/evm/evm-wallets.js';
import { lazySandboxEvmChains } from './domain/evm/sandbox-lazy-chains.js';
import { solanaFamily } from './domain/solana/solana-family.js';
import { SolanaTransfers } from './domain/solana/transfer-service.js';
import { LedgerCheck } from './domain/ledger/ledger-check.js';
import { WalletStatements } from './domain/ledger/statement-service.js';
import { AuditLog } from './domain/audit/audit-log.js';
import { KeyRequestLog } from './http/key-request-log.js';

/** Every domain service, built once per process and shared by GraphQL, REST and the workers. */
export interface Services {
  config: Config;
  db: Database;
  clock: Clock;
  /** PostgreSQL and Redis as this process sees them: readiness, one log line per outage. */
  health: DependencyHealth;
  users: UserService;
  /** The user domain as the graph reads it: `users` in service mode, the upstream's in facade mode. */
  userDirectory: UserDirectory;
  /** Facade mode: the REST v1 deployment this gateway fronts (docs/facade.md). */
  upstream: RestV1Upstream | undefined;
  /** Facade mode: how much upstream work an operation may cause (its budget, deadline, the partner's waits). */
  upstreamBounds: UpstreamBounds | undefined;
  /** Facade mode: each partner's upstream webhooks, verified and written to the events table. */
  inboundWebhooks: InboundWebhooks | undefined;
  /** Facade mode: the one door upstream events enter the events log by, and each record's state. */
  upstreamEventLog: UpstreamEventLog | undefined;
  /** Facade mode: the row each upstream user's own records here refer to. */
  localOwners: LocalOwners;
  /** Facade mode: the record per Idempotency-Key of its GraphQL mutations (docs/facade.md#idempotency-of-mutations). */
  facadeKeys: FacadeKeys | undefined;
  /** Facade mode: the job that looks upstream for a mutation whose outcome is unknown. */
  keyMatcher: KeyMatcher | undefined;
  /** Facade mode: the operator queue of mutations the matcher could not settle. */
  unknownOutcomes: UnknownOutcomes | undefined;
  apiKeys: ApiKeyService;
  /** Each API key's payout limits and IP allow-list. */
  keyControls: KeyControlsService;
  /** Each key's and Connect app's GraphQL settings and trusted documents (docs/graphql.md). */
  graphqlAccess: GraphQLAccessService;
  events: EventService;
  eventFeed: EventFeed;
  /** Each API key's last requests as this instance answered them (memory only). */
  requestLog: KeyRequestLog;
  doorbell: Doorbell;
  webhooks: WebhookService;
  offramp: OfframpService;
  /** Sandbox: fires an event kind by running the operation that emits it. */
  eventTrigger: EventTriggerService;
  /** Sandbox: which accounts run on a test clock (in memory), and the clocks' API. */
  testClocks: TestClocks;
  testClockService: TestClockService;
  idempotency: Idempotency;
  wallet: WalletService;
  paymentMethods: PaymentMethodService;
  deposits: DepositService;
  /** The deposit with a payment method as the graph reads it: `deposits` in service mode, the upstream's in facade mode. */
  depositsDomain: DepositsDomain;
  payouts: PayoutService;
  bills: BillsService;
  /** The offramp's assets and quotes as the graph reads them: `offramp` in service mode, the upstream's in facade mode. */
  offrampDomain: OfframpDomain;
  /** The caller's Solana wallet address as the graph reads it: the custodial wallets, or the upstream's. */
  solanaWalletDomain: SolanaWalletDomain;
  /** Swap quotes as the graph reads them: `solanaExchange` in service mode, the upstream's in facade mode. */
  swapQuotesDomain: SwapQuotesDomain;
  /** The bills domain as the graph reads it: `bills` in service mode, the upstream's in facade mode. */
  billsDomain: BillsDomain;
  solanaWallets: CustodialWallets;
  customers: CustomerService;
  /** Creating a business customer as the graph reads it: `customers` in service mode, the upstream's in facade mode. */
  customersDomain: CustomersDomain;
  /** The account's growing lists as cursor windows (the graph's connections). */
  accountLists: AccountLists;
  /** Batched lookups of an owner's records by id or reference (the graph's loaders). */
  recordLookups: RecordLookups;
  billsProvider: (environment: Environment) => BillsProvider;
  /** The NGN payments provider of an environment. */
  paymentsProvider: (environment: Environment) => PaymentsProvider;
  /** Each provider's limit on calls in flight (upstream/bulkhead.ts), for the services and the metrics. */
  bulkheads: Bulkheads;
  /** Set when Paycrest is configured: production offramp and its webhooks. */
  paycrest: PaycrestProvider | undefined;
  secrets: SecretBox;
  rateLimiter: RateLimiter;
  limitPolicy: LimitPolicy;
  /** The per-tenant cap on pending background work (429 when over). */
  backlog: TenantBacklog;
  mailer: Mailer;
  accounts: AccountService;
  /** Developer apps (OAuth clients). */
  oauthClients: ClientRegistry;
  /** Connect: authorization requests, codes, tokens, revocation. */
  authorizationServer: AuthorizationServer;
  /** The chain families this process serves (Solana), as the chain-neutral core finds them. */
  chainFamilies: ChainFamilies;
  solanaChains: SolanaChains;
  /** The sandbox's litesvm chains, their state in the database. */
  sandboxChains: SandboxChainStore;
  solanaTokens: TokenDirectory;
  solanaPortfolio: SolanaPortfolio;
  solanaTransfers: SolanaTransfers;
  solanaExchange: SolanaExchange;
  sandboxFaucet: SandboxFaucet;
  /** Production incoming-transfer polling (sandbox chains report arrivals as they execute). */
  solanaIncoming: IncomingWatch;
  /** Custodial EVM keys: one per user and environment, one address on every EVM network. */
  evmWallets: EvmWallets;
  evmChains: EvmChains;
  /** Networks, balances and portfolio of the EVM wallet. */
  evmReads: EvmReads;
  evmTransfers: EvmTransfers;
  /** The EVM wallet's operations as the graph reads them: `evmReads` and `evmTransfers`, or the upstream's. */
  evmWalletDomain: EvmWalletDomain;
  evmFaucet: EvmSandboxFaucet;
  /** EVM quotes and swaps (the sandbox's Uniswap V2 pools). */
  evmExchange: EvmExchange;
  /** One portfolio across the NGN wallet, Solana and every EVM network, valued in USD and NGN. */
  portfolio: Portfolio;
  /** Token arrivals at custodial EVM wallets, told once. */
  evmIncoming: EvmIncoming;
  /** The scheduled ledger invariant check and its latest result. */
  ledgerCheck: LedgerCheck;
  /** Matches providers' own records with the gateway's (docs/reconciliation.md). */
  reconciliation: Reconciliation;
  /** Balances as of an instant and statements of the NGN wallet. */
  statements: WalletStatements;
  /** The account owners' audit trail and its chain verification. */
  auditLog: AuditLog;
}

/** The default budgets; fields add their own with @rateLimit. */
export interface LimitPolicy {
  perCredential: LimitRule;
  anonymous: LimitRule;
  authFailures: LimitRule;
}

export function limitPolicyFrom(config: Config): LimitPolicy {
  return {
    perCredential: { name: 'operations', max: config.RATE_LIMIT_PER_MINUTE, windowMs: 60_000 },
    anonymous: { name: 'anonymous', max: config.RATE_LIMIT_ANONYMOUS_PER_MINUTE, windowMs: 60_000 },
    authFailures: {
      name: 'auth-failures',
      max: config.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
      windowMs: 60_000,
      message: 'Too many failed authentications from this address. Retry later.',
    },
  };
}

export function createServices(
  config: Config,
  db: Database,
  clock: Clock,
  reportBackgroundError: (e: unknown) => void,
  givenRateLimiter?: RateLimiter,
): Services {
  const health = new DependencyHealth(db, pino({ name: 'dependencies', level: config.LOG_LEVEL }));
  // A database outage is one line from `health`, not one stack trace per failed poll.
  const onBackgroundError = (error: unknown) => {
    if (!health.reportDatabaseError(error)) reportBackgroundError(error);
  };
  // Redis errors are reported by `health` (one line per outage); the limiter falls back to memory meanwhile.
  const rateLimiter =
    givenRateLimiter ??
    RateLimiter.connect(config.REDIS_URL, undefined, (redis) => health.watchRedis(redis, 'rate limits'));
  if (givenRateLimiter?.redis) health.watchRedis(givenRateLimiter.redis, 'rate limits');
  const secrets = SecretBox.fromConfig(config.SECRETS_KEY);
  const doorbell = new Doorbell(config.REDIS_URL, (client, name) => health.watchRedis(client, name));
  const eventFeed = new EventFeed(db, 250, onBackgroundError);
  doorbell.onRing(() => eventFeed.wake());
  const paycrest = config.PAYCREST_API_KEY
    ? new PaycrestProvider({
        apiKey: config.PAYCREST_API_KEY,
        apiSecret: config.PAYCREST_API_SECRET ?? '',
        baseUrl: config.PAYCREST_BASE_URL,
      })
    : undefined;
  const fingerprintKey = config.IDEMPOTENCY_SECRET
    ? Buffer.from(config.IDEMPOTENCY_SECRET, 'utf8')
    : secrets.deriveKey('idempotency-fingerprint');
  const idempotency = new Idempotency(db, clock, fingerprintKey, config.IDEMPOTENCY_LEASE_MS);
  const sandboxPayments = new SandboxPaymentsProvider(clock);
  const productionPayments: PaymentsProvider = config.FLUTTERWAVE_CLIENT_ID
    ? new FlutterwaveProvider({
        clientId: config.FLUTTERWAVE_CLIENT_ID,
        clientSecret: config.FLUTTERWAVE_CLIENT_SECRET ?? '',
        encryptionKey: config.FLUTTERWAVE_ENCRYPTION_KEY ?? '',
        baseUrl: config.FLUTTERWAVE_BASE_URL,
        tokenUrl: config.FLUTTERWAVE_TOKEN_URL,
        v3SecretKey: config.FLUTTERWAVE_V3_SECRET_KEY,
        v3BaseUrl: config.FLUTTERWAVE_V3_BASE_URL,
      })
    : new UnconfiguredPaymentsProvider();
  // Bank lists feed every withdrawal, USSD deposit and bank payment method: asked once an hour.
  const providers = { sandbox: withCachedBanks(sandboxPayments), production: withCachedBanks(productionPayments) };
  const paymentsProvider = (environment: Environment): PaymentsProvider => providers[environment];
  // The sandbox providers run in-process: their limit only bounds bursts, so it is set high.
  const bulkheads = new Bulkheads((provider) => ({
    limit: provider === 'sandbox' ? config.PROVIDER_CONCURRENCY_SANDBOX : config.PROVIDER_CONCURRENCY,
    maxWaitMs: config.PROVIDER_QUEUE_WAIT_MS,
  }));
  const paymentMethods = new PaymentMethodService(db, paymentsProvider);
  const sandboxBills = new SandboxBillsProvider();
  const productionBills: BillsProvider | undefined = config.FLUTTERWAVE_V3_SECRET_KEY
    ? new FlutterwaveBillsProvider({
        secretKey: config.FLUTTERWAVE_V3_SECRET_KEY,
        baseUrl: config.FLUTTERWAVE_V3_BASE_URL,
      })
    : undefined;
  const billsProvider = (environment: Environment): BillsProvider => {
    if (environment === 'sandbox') return sandboxBills;
    if (!productionBills)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'Bills are not configured for production (FLUTTERWAVE_V3_SECRET_KEY is unset).',
      );
    return productionBills;
  };
  const keyrings = {
    sandbox:
      MasterKeyring.parse(config.SOLANA_MASTER_KEYS_SANDBOX, 'SOLANA_MASTER_KEYS_SANDBOX') ??
      (config.NODE_ENV === 'production' ? undefined : MasterKeyring.development('sandbox')),
    production: MasterKeyring.parse(config.SOLANA_MASTER_KEYS_PRODUCTION, 'SOLANA_MASTER_KEYS_PRODUCTION'),
  };
  const users = new UserService(db);
  // Facade mode: the upstream holds users, keys and money; the domains it answers are bound to it.
  const upstream =
    config.GATEWAY_MODE === 'facade' && config.UPSTREAM_URL
      ? new RestV1Upstream(
          {
            baseUrl: config.UPSTREAM_URL,
            timeoutMs: config.UPSTREAM_TIMEOUT_MS,
            privateAddresses: config.UPSTREAM_PRIVATE_ADDRESSES ?? false,
          },
          // The upstream's Retry-After per partner, in the rate limits' Redis when there is one.
          new UpstreamWaits(
            () => rateLimiter.redis,
            () => clock.now().getTime(),
          ),
        )
      : undefined;
  const upstreamBounds = upstream
    ? new UpstreamBounds(
        upstream,
        rateLimiter,
        {
          requestDeadlineMs: config.UPSTREAM_REQUEST_DEADLINE_MS,
          callBudget: config.UPSTREAM_CALL_BUDGET,
          callsPerMinute: config.UPSTREAM_CALLS_PER_MINUTE,
        },
        () => clock.now().getTime(),
      )
    : undefined;
  const userDirectory: UserDirectory = upstream ? new UpstreamUserDirectory(upstream, config.API_KEY_CACHE_MS) : users;
  // Facade mode: an upstream key's account, as the facade keeps its records (inbound-owners.ts).
  const upstreamEventLog = upstream ? new UpstreamEventLog(db) : undefined;
  const ownerOfUpstreamKey = async (key: string) => {
    if (!(userDirectory instanceof UpstreamUserDirectory)) return undefined;
    try {
      return localOwnerId((await userDirectory.userOf({ value: key, scheme: 'api-key' })).id);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'UNAUTHENTICATED') return undefined;
      throw error;
    }
  };
  const mailLog = pino({ name: 'mail', level: config.LOG_LEVEL });
  const mailer = new SmtpMailer({
    smtpUrl: config.SMTP_URL,
    from: config.MAIL_FROM,
    logMessages: config.NODE_ENV !== 'production',
    log: (message) => mailLog.info({ to: message.to, subject: message.subject, text: message.text }, 'mail'),
  });
  const oauthClients = new ClientRegistry(db, clock);
  const rpcUrls: Partial<Record<SolanaNetwork, string | undefined>> = {
    'mainnet-beta': config.SOLANA_RPC_URL_MAINNET_BETA,
    devnet: config.SOLANA_RPC_URL_DEVNET,
    testnet: config.SOLANA_RPC_URL_TESTNET,
  };
  const rpcChains: Partial<Record<SolanaNetwork, RpcChain>> = Object.fromEntries(
    Object.entries(rpcUrls)
      .filter(([, url]) => url)
      .map(([network, url]) => [network, new RpcChain(network as SolanaNetwork, url!)]),
  );
  const solanaIncoming = new IncomingWatch(db, clock, rpcChains, incomingTransferRecorder('production', clock));
  const solanaWallets = new CustodialWallets(db, (environment) => keyrings[environment], solanaIncoming);
  const sandboxChains = new SandboxChainStore(db, createSandboxWorld, upgradeSandboxWorld, clock);
  const onExecuted = sandboxExecutionRecorder(clock);
  // Every movement of a custodial wallet on a sandbox chain is posted to the asset ledger in the chain's commit.
  sandboxChains.onEffects = sandboxLedgerPoster();
  const litesvmChains = new Map<SolanaNetwork, LiteSvmChain>();
  const sandboxChain = (network: SolanaNetwork) => {
    let chain = litesvmChains.get(network);
    if (!chain) litesvmChains.set(network, (chain = new LiteSvmChain(network, sandboxChains, onExecuted)));
    return chain;
  };
  const solanaChains = new SolanaChains(sandboxChain, rpcChains);
  const sandboxAmm = new SandboxAmm(sandboxChains);
  const jupiter = new JupiterProvider({
    baseUrl: config.JUPITER_BASE_URL,
    priceUrl: config.JUPITER_PRICE_URL,
    apiKey: config.JUPITER_API_KEY,
  });
  const exchangeProvider = (environment: Environment) => (environment === 'sandbox' ? sandboxAmm : jupiter);
  const solanaTokens = new TokenDirectory(solanaChains, exchangeProvider, SANDBOX_TOKENS);
  const apiKeys = new ApiKeyService(db, clock, config.API_KEY_CACHE_MS, onBackgroundError);
  const keyControls = new KeyControlsService(db, clock);
  // A changed allow-list applies to this process's next request at once (others within the cache TTL).
  keyControls.onChange = (keyId) => apiKeys.forget(keyId);
  const graphqlAccess = new GraphQLAccessService(
    db,
    clock,
    { maxCost: config.GRAPHQL_MAX_COST, maxDepth: config.GRAPHQL_MAX_DEPTH },
    config.API_KEY_CACHE_MS,
  );
  // Likewise for a key's GraphQL settings, which its principal carries.
  graphqlAccess.onKeyChange = (keyId) => apiKeys.forget(keyId);
  const solanaTransfers = new SolanaTransfers(
    db,
    clock,
    idempotency,
    solanaWallets,
    solanaChains,
    solanaTokens,
    config.SOLANA_CONFIRM_WAIT_MS,
  );
  // The sandbox's EVM chains, one per network, built on first use and shared by every instance
  // through the database; each network used is watched for token arrivals from then on.
  const sandboxEvm = lazySandboxEvmChains(db, { onMined: () => evmIncoming.ring() });
  const reconciliation = new Reconciliation(
    db,
    clock,
    reconciliationSources({
      payments: providers,
      bills: { sandbox: sandboxBills, production: productionBills },
      offramp: { production: paycrest },
      chains: Object.values(rpcChains),
      sandboxMarketMakers: [
        ...SOLANA_NETWORKS.map((network) => sandboxMarketMakers(sandboxChain(network))),
        ...EVM_NETWORKS.map((network) => evmSandboxMarketMakers(network, () => sandboxEvm.chainFor(network))),
      ],
      ledgerChains: SOLANA_NETWORKS.map((network) => sandboxLedgerBalances(sandboxChains, network)),
    }),
    {
      settlementHours: config.RECON_SETTLEMENT_HOURS,
      settlementHoursByProvider: parseSettlementHours(config.RECON_SETTLEMENT_HOURS_BY_PROVIDER),
      breakMaxAgeMs: config.RECON_BREAK_MAX_AGE_HOURS * 3_600_000,
    },
  );
  // Bills, payouts, deposits, swap quotes and offramp orders read the time of the account they act
  // for: a sandbox account's test clock when one is attached, else `clock` (production never has
  // one: TestClocks.clockFor). Their jobs are stored in wall time from the clock's offset as it
  // stands (jobs/job-runner.ts clockedRunAt; docs/sandbox.md#test-clocks).
  const testClocks = new TestClocks(db, clock, onBackgroundError);
  const clockFor = testClocks.clockFor;
  const bills = new BillsService(db, clockFor, idempotency, billsProvider, bulkheads);
  // A facade's mutations are sent once under its own record of their key; the send's lease lasts
  // past the upstream's deadline, so only a process that died mid-send leaves one in flight.
  const facadeKeys = upstream
    ? new FacadeKeys(db, clock, idempotency, secrets, {
        keyed: keyedRoutesOf(config.UPSTREAM_ROUTES, config.UPSTREAM_KEYED_ROUTES),
        leaseMs: config.UPSTREAM_TIMEOUT_MS + 30_000,
        matchEveryMs: config.UPSTREAM_MATCH_EVERY_MS,
      })
    : undefined;
  const upstreamBills = upstream
    ? new UpstreamBills(upstream, routeMapOf(config.UPSTREAM_ROUTES), facadeKeys)
    : undefined;
  const billsDomain: BillsDomain = upstreamBills ?? localBills(bills);
  const matcherSettings = { everyMs: config.UPSTREAM_MATCH_EVERY_MS, windowMs: config.UPSTREAM_MATCH_WINDOW_MS };
  const deposits = new DepositService(db, clockFor, idempotency, users, paymentMethods, paymentsProvider, bulkheads);
  const payouts = new PayoutService(
    db,
    clockFor,
    idempotency,
    paymentsProvider,
    {
      periodMs: config.PAYOUT_COOLING_OFF_MINUTES * 60_000,
      capKobo: BigInt(config.PAYOUT_COOLING_OFF_CAP_KOBO),
      sandbox: config.PAYOUT_COOLING_OFF_SANDBOX,
    },
    new PayoutControls(keyControls, payoutLimitDefaultsOf(config)),
    bulkheads,
  );
  const solanaExchange = new SolanaExchange(
    db,
    clockFor,
    idempotency,
    solanaWallets,
    solanaChains,
    solanaTokens,
    exchangeProvider,
    solanaTransfers,
  );
  // EVM wallets share the Solana keys' master keyrings (chain/keyring.ts; their AAD names the family).
  const evmWallets = new EvmWallets(db, (environment) => keyrings[environment]);
  const evmChains: EvmChains = new EvmChains(
    (network) => sandboxEvm.chainFor(network),
    (network) => evmIncoming.watch('sandbox', network),
  );
  const evmIncoming = new EvmIncoming(db, clock, evmChains, evmWallets);
  const evmTransfers = new EvmTransfers(db, clock, idempotency, evmWallets, evmChains, config.SOLANA_CONFIRM_WAIT_MS);
  // EVM swaps run on the sandbox's Uniswap V2 pools; production has no EVM exchange yet (503).
  const sandboxEvmExchange = sandboxUniswap((network) => evmChains.sandboxFor(network));
  const evmExchangeOf = (environment: Environment) => (environment === 'sandbox' ? sandboxEvmExchange : undefined);
  const wallet = new WalletService(db, clock, users, idempotency);
  const solanaPortfolio = new SolanaPortfolio(solanaWallets, solanaChains, solanaTokens, db);
  const evmReads = new EvmReads(evmWallets, evmChains);
  const portfolio = new Portfolio(
    clock,
    // The naira's dollar rate: the sandbox offramp's market rate, named in every answer as its source.
    () => ({
      ngnPerUsd: Number(SANDBOX_OFFRAMP.marketRates.NGN),
      source: 'sandbox offramp market rate',
      asOf: clock.now(),
    }),
    [
      ngnWalletSource((principal) => wallet.balance(principal)),
      solanaPortfolioSource(solanaPortfolio, solanaTokens, (environment) =>
        environment === 'sandbox' ? 'sandbox AMM pools (Solana)' : 'Jupiter prices',
      ),
      evmPortfolioSource(db, evmReads, evmExchangeOf),
    ],
  );
  const customers = new CustomerService(db, clock);
  const offramp = new OfframpService(db, clockFor, idempotency, {
    sandbox: new SandboxOfframpProvider(clock),
    production: paycrest,
  });
  return {
    offrampDomain: upstream ? new UpstreamOfframp(upstream) : localOfframp(offramp),
    solanaWalletDomain: upstream
      ? new UpstreamSolanaWallet(upstream, facadeKeys)
      : localSolanaWallet(solanaWallets, solanaTransfers),
    solanaIncoming,
    reconciliation,
    ledgerCheck: new LedgerCheck(db, clock),
    statements: new WalletStatements(db),
    auditLog: new AuditLog(db),
    chainFamilies: new ChainFamilies([
      solanaFamily(solanaChains, exchangeProvider),
      evmFamily(evmChains, evmExchangeOf),
    ]),
    evmWallets,
    evmChains,
    evmReads,
    portfolio,
    evmTransfers,
    evmWalletDomain: upstream
      ? new UpstreamEvmWallet(upstream, routeMapOf(config.UPSTREAM_ROUTES), facadeKeys)
      : localEvmWallet(evmReads, evmTransfers),
    evmExchange: new EvmExchange(db, clockFor, idempotency, evmWallets, evmChains, evmTransfers, evmExchangeOf),
    evmIncoming,
    evmFaucet: new EvmSandboxFaucet(evmChains, evmWallets, idempotency),
    solanaChains,
    sandboxChains,
    solanaTokens,
    solanaPortfolio,
    solanaTransfers,
    solanaExchange,
    swapQuotesDomain: upstream ? new UpstreamSwapQuotes(upstream, facadeKeys) : localSwapQuotes(solanaExchange),
    sandboxFaucet: new SandboxFaucet(sandboxChains, solanaWallets, idempotency),
    mailer,
    accounts: new AccountService(db, clock, users, mailer, publicUrlOf(config)),
    oauthClients,
    authorizationServer: new AuthorizationServer(db, clock, (clientId) => oauthClients.find(clientId)),
    customers,
    customersDomain: upstream ? new UpstreamCustomers(upstream) : localCustomers(customers),
    accountLists: new AccountLists(db),
    recordLookups: new RecordLookups(db),
    solanaWallets,
    billsProvider,
    bills,
    billsDomain,
    idempotency,
    paymentsProvider,
    paymentMethods,
    wallet,
    deposits,
    depositsDomain: upstream ? new UpstreamDeposits(upstream, facadeKeys) : localDeposits(deposits),
    payouts,
    bulkheads,
    keyControls,
    offramp,
    eventTrigger: new EventTriggerService(db, clock, idempotency, { deposits, payouts, bills, offramp }),
    testClocks,
    testClockService: new TestClockService(db, clock, testClocks),
    paycrest,
    eventFeed,
    requestLog: new KeyRequestLog(),
    doorbell,
    secrets,
    webhooks: new WebhookService(db, clock, secrets, config.WEBHOOK_LOCAL_RECEIVERS),
    rateLimiter,
    limitPolicy: limitPolicyFrom(config),
    backlog: new TenantBacklog(db, config.TENANT_PENDING_JOBS_MAX),
    config,
    db,
    clock,
    health,
    users,
    userDirectory,
    upstream,
    upstreamBounds,
    inboundWebhooks:
      upstream && upstreamEventLog
        ? new InboundWebhooks(db, clock, secrets, publicUrlOf(config), upstreamEventLog, ownerOfUpstreamKey)
        : undefined,
    upstreamEventLog,
    localOwners: new LocalOwners(db),
    facadeKeys,
    keyMatcher:
      facadeKeys && upstreamBills ? new KeyMatcher(db, clock, facadeKeys, upstreamBills, matcherSettings) : undefined,
    unknownOutcomes:
      facadeKeys && upstreamBills ? new UnknownOutcomes(db, clock, facadeKeys, upstreamBills) : undefined,
    apiKeys,
    graphqlAccess,
    events: new EventService(db),
  };
}
