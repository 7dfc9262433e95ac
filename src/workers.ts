import type { FastifyBaseLogger } from 'fastify';
import { onRelayHint, startRelay } from './domain/events/relay.js';
import { listenForWakes, wakeSender } from './db/wake-channel.js';
import { onJobWrites } from './db/plain-sql.js';
import type { Database } from './db/client.js';
import { type Config, isFacade } from './config.js';
import { onDatabase } from './db/database-binding.js';
import { isEmbeddedDatabase } from './db/embedded.js';
import { jobsOf } from './db/pool-routing.js';
import { databaseFaultOf, describeDatabaseError } from './db/faults.js';
import { type JobHandler, JobRunner, type JobRunnerOptions } from './domain/jobs/job-runner.js';
import { retentionJobHandlers, scheduleRetention } from './domain/retention/retention-jobs.js';
import type { Services } from './services.js';
import type { TestClocks } from './domain/sandbox/test-clocks.js';
import { offrampJobHandlers } from './domain/offramp/offramp-jobs.js';
import { walletJobHandlers } from './domain/wallet/wallet-jobs.js';
import { billJobHandlers } from './domain/bills/bill-jobs.js';
import { WebhookDeliveryHandler } from './domain/webhooks/delivery-worker.js';
import { SolanaConfirmHandler } from './domain/solana/solana-jobs.js';
import { EvmConfirmHandler } from './domain/evm/evm-jobs.js';
import { LedgerCheckHandler, scheduleLedgerCheck } from './domain/ledger/ledger-check-job.js';
import { HoldExpiryHandler } from './domain/money/holds.js';
import { failExpiredHoldTransaction } from './domain/wallet/wallet-transitions.js';
import { ReconcileHandler, scheduleReconciliation } from './domain/reconciliation/reconciliation-job.js';
import type { Environment } from './domain/auth/permissions.js';
import { outsideTraces } from './observability/tracing.js';
import { type ChangeSource, GapFillHandler } from './domain/facade/gap-fill.js';
import { OfframpOrderChanges } from './domain/facade/offramp-order-changes.js';
import { routeMapOf } from './domain/facade/upstream-routes.js';
import { BillRecordChanges } from './domain/facade/bill-record-changes.js';

/** The EVM arrival watch's first and longest waits between rounds that find nothing. */
const EVM_WATCH_FIRST_MS = 2_000;
const EVM_WATCH_LONGEST_MS = 30_000;

/**
 * Announces this instance's writes to the others over the wake channel (wake-channel.ts): the jobs
 * it writes, which another instance's idle lane may take sooner than this one's, the sandbox test
 * clocks it changes, and, for an instance that runs no relay (`events`: WORKERS=false), the events
 * it records. Returns the stop.
 */
export function announceWrites(
  db: Database,
  { events, testClocks }: { events: boolean; testClocks?: TestClocks },
): () => void {
  const sender = wakeSender(db);
  const stops = [onJobWrites(() => sender.send('jobs'))];
  if (testClocks) stops.push(testClocks.onLocalChange(() => sender.send('clocks')));
  if (events) stops.push(onRelayHint(() => sender.send('events')));
  return () => {
    for (const stop of stops) stop();
    sender.stop();
  };
}

/** The longest an idle relay or job lane sleeps on the embedded database, which no other process writes. */
export const EMBEDDED_IDLE_MAX_MS = 30_000;

/**
 * The longest an idle relay sleeps on PostgreSQL while the wake channel listens: every event is
 * either this process's own (recordEvent hints the relay) or told by the instance that wrote it
 * (an instance without a relay announces its events), so the idle round only backs the channel up.
 * Without a listening session (lost, or behind a transaction-mode PgBouncer) the relay's own 2 s.
 */
export const LISTENING_RELAY_IDLE_MAX_MS = 30_000;

/** Pause between relay rounds while events arrive (see startRelay). */
export const RELAY_BUSY_MS = 5;

/**
 * Every job kind this gateway runs, with its handler. A facade runs only its own: webhook
 * deliveries, pruning of its own tables, the matcher of its mutations whose outcome is unknown,
 * and each partner account's gap-filling job (which lists the account's records upstream for
 * changes its webhooks did not bring). The faced domains' jobs (settlement, status polls,
 * sandbox lifecycles, confirmations, hold expiry, the ledger check, reconciliation) belong to the
 * upstream, which holds their records.
 */
export function jobHandlersOf(services: Services): JobHandler[] {
  const { config } = services;
  const own = [
    new WebhookDeliveryHandler(services.db, services.clock, services.secrets, {
      localReceivers: config.WEBHOOK_LOCAL_RECEIVERS,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
    }),
    ...retentionJobHandlers(services.db, services.clock, config),
  ];
  if (isFacade(config)) {
    // A facade's own: the matcher of its mutations whose outcome is unknown (never re-sent), and
    // the gap-filling job of each partner account with inbound events set up.
    const facadeOwn = services.keyMatcher ? [...own, services.keyMatcher] : own;
    const { upstreamEventLog } = services;
    if (!upstreamEventLog) return facadeOwn;
    return [
      ...facadeOwn,
      new GapFillHandler(
        services.db,
        services.clock,
        services.secrets,
        upstreamEventLog,
        changeSourcesOf(services),
        config.FACADE_GAP_FILL_EVERY_MS,
      ),
    ];
  }
  return [
    ...own,
    ...offrampJobHandlers(services.offramp),
    ...walletJobHandlers(services.deposits, services.payouts, services.clock),
    ...billJobHandlers(services.bills),
    new SolanaConfirmHandler(services.solanaTransfers, services.clock),
    new EvmConfirmHandler(services.evmTransfers, services.clock),
    new HoldExpiryHandler(services.db, services.testClocks.clockFor, failExpiredHoldTransaction),
    new LedgerCheckHandler(
      services.ledgerCheck,
      services.db,
      services.clock,
      config.LEDGER_CHECK_EVERY_MINUTES * 60_000,
    ),
    new ReconcileHandler(
      services.reconciliation,
      config.RECON_ENVIRONMENTS.split(',') as Environment[],
      services.db,
      services.clock,
      config.RECON_EVERY_HOURS * 3_600_000,
    ),
  ];
}

/**
 * What a facade's gap-filling job lists upstream: the spec's bill records, and the offramp orders
 * where the route map places their list (docs/facade.md#the-gap-filling-job).
 */
function changeSourcesOf(services: Services): ChangeSource[] {
  const now = () => services.clock.now();
  const sources: ChangeSource[] = [new BillRecordChanges(services.billsDomain, now)];
  const orders = routeMapOf(services.config.UPSTREAM_ROUTES)['offramp.orders'];
  if (orders && services.upstream) sources.push(new OfframpOrderChanges(services.upstream, orders, now));
  return sources;
}

/** Lane sizes from the settings: each tenant may hold JOB_TENANT_SHARE of a lane (at least one slot). */
export function jobRunnerOptionsOf(config: Config): JobRunnerOptions {
  const lane = (concurrency: number, perKey = concurrency) => ({
    concurrency,
    perTenant: Math.max(1, Math.floor(concurrency * config.JOB_TENANT_SHARE)),
    perKey,
  });
  return {
    leaseMs: config.JOB_LEASE_MS,
    lanes: {
      money: lane(config.JOB_CONCURRENCY_MONEY),
      webhooks: lane(config.JOB_CONCURRENCY_WEBHOOKS, config.WEBHOOK_CONCURRENCY_PER_ENDPOINT),
      polling: lane(config.JOB_CONCURRENCY_POLLING),
    },
  };
}

export interface Workers {
  jobs: JobRunner;
  stop(graceMs: number): Promise<void>;
}

/**
 * Background work of one process: the outbox relay (stamps event order; one instance at a time
 * holds its lock) and the job runner (leases, so any number of processes share the queue).
 * Started in no trace, whoever starts it: each loop below keeps the context it starts in, and
 * one started inside a request would add its rounds to that request's trace for ever.
 */
export function startWorkers(
  services: Services,
  log: FastifyBaseLogger,
  handlers: JobHandler[] = [],
  relayEveryMs = 100,
): Workers {
  return outsideTraces(() => runWorkers(services, log, handlers, relayEveryMs));
}

function runWorkers(services: Services, log: FastifyBaseLogger, handlers: JobHandler[], relayEveryMs: number): Workers {
  // Everything here takes the jobs pool's connections, never a request's: schedules and the watch
  // through the jobs handle, the runner and its handlers through their claims' handles, the relay
  // on a connection of its own.
  const jobsDb = jobsOf(services.db);
  const { health } = services;
  /**
   * An outage (unreachable, read-only) is logged once by `health`. A statement or lock timeout, or
   * a pool with no connection free in time, is no outage but work that took too long or waited:
   * each is a warning with its code and the driver's message (never the SQL). Anything else here
   * is a defect worth its stack.
   */
  const report = (error: unknown, message: string, fields: object = {}) => {
    const fault = databaseFaultOf(error);
    if (fault === 'timeout' || fault === 'pool-exhausted')
      log.warn({ ...fields, database: describeDatabaseError(error) }, message);
    else if (!health.reportDatabaseError(error)) log.error({ err: error, ...fields }, message);
  };
  /** After a failure: while the database is down, wait for it (checked twice a second), at most a second. */
  const waitAfterError = (error: unknown) =>
    health.reportDatabaseError(error) ? health.databaseBack(1_000) : Promise.resolve();
  let stopped = false;
  // The relay has a connection of its own (relay.ts); its in-process readers are keyed by the application's handle.
  // The embedded database is this process's alone: nothing written elsewhere needs finding, so its
  // idle relay and lanes sleep up to EMBEDDED_IDLE_MAX_MS (each of its rounds runs on the main thread).
  const embedded = isEmbeddedDatabase(services.db);
  const idleMaxMs = embedded ? EMBEDDED_IDLE_MAX_MS : undefined;
  // Instances that run no workers (WORKERS=false) tell of the events and jobs they write.
  // A wake for jobs is sent once the writes it tells of have most often committed: due now.
  const wakes = listenForWakes(services.db, (wake) => {
    if (wake === 'events') relay.hint();
    else if (wake === 'jobs') jobs.jobsWritten({ runAt: services.clock.now() });
    else void services.testClocks.load();
  });
  services.testClocks.listenWith(wakes.listening);
  const relay = startRelay(services.db, {
    idleMs: relayEveryMs,
    idleMaxMs: () => (wakes.listening() ? LISTENING_RELAY_IDLE_MAX_MS : idleMaxMs),
    onStamped: () => services.doorbell.ring(),
    onError: (error) => {
      report(error, 'event relay failed');
      return waitAfterError(error);
    },
  });

  const jobs = new JobRunner(services.db, services.clock, [...jobHandlersOf(services), ...handlers], {
    ...jobRunnerOptionsOf(services.config),
    idleMaxMs,
    onError: (error, job) => report(error, 'job failed', { jobId: job?.id, kind: job?.kind }),
    waitAfterError,
    // A sandbox test clock's job runs on the clock's latest time, wherever it was advanced.
    beforeClockedJob: (testClockId) => services.testClocks.reload(testClockId),
  });
  jobs.start();
  // The relay writes webhook deliveries in the round that stamps their events (events/fan-out.ts),
  // so a ring means deliveries to claim now rather than at the webhooks lane's next poll (the
  // doorbell rings on every instance with Redis).
  const stopPoking = services.doorbell.onRing(() => jobs.poke('webhooks'));
  const facade = isFacade(services.config);
  if (!facade) {
    scheduleLedgerCheck(jobsDb, services.clock.now()).catch((error) =>
      report(error, 'scheduling the ledger check failed'),
    );
    scheduleReconciliation(jobsDb, services.clock.now()).catch((error) =>
      report(error, 'scheduling reconciliation failed'),
    );
  }
  scheduleRetention(jobsDb, services.clock.now()).catch((error) =>
    report(error, 'could not schedule the retention job'),
  );

  // Production Solana wallets are polled for arrivals (only when an RPC URL is configured).
  let watchTimer: NodeJS.Timeout | undefined;
  let watchRun: Promise<unknown> = Promise.resolve();
  const incoming = onDatabase(services.solanaIncoming, services.db, () => jobsDb);
  const watch = () => {
    if (stopped || facade || !incoming.active) return;
    watchRun = incoming
      .poll()
      .catch((error) => report(error, 'Solana incoming watch failed'))
      .finally(() => {
        if (!stopped) watchTimer = setTimeout(watch, 5_000);
      });
  };
  watch();

  // Watched EVM networks (each from its first use) are read for token arrivals at custodial wallets:
  // at once when this process mined blocks (its sends and faucet grants ring), else on a wait that
  // doubles from 2 s to 30 s while nothing arrives, so an idle instance barely reads (docs/evm.md).
  let evmTimer: NodeJS.Timeout | undefined;
  let evmRun: Promise<unknown> | undefined;
  let evmWait = EVM_WATCH_FIRST_MS;
  const evmIncoming = onDatabase(services.evmIncoming, services.db, () => jobsDb);
  const watchEvm = () => {
    evmTimer = undefined;
    if (stopped || facade || !services.evmChains.sandboxRunning) return;
    evmRun = evmIncoming
      .poll()
      .then((told) => {
        evmWait = told > 0 ? EVM_WATCH_FIRST_MS : Math.min(evmWait * 2, EVM_WATCH_LONGEST_MS);
      })
      .catch((error) => report(error, 'EVM incoming watch failed'))
      .finally(() => {
        evmRun = undefined;
        if (!stopped) evmTimer = setTimeout(watchEvm, evmWait);
      });
  };
  const stopRinging = services.evmIncoming.onRing(() => {
    evmWait = EVM_WATCH_FIRST_MS;
    // A round under way finishes and waits the first wait; a waiting one reads now.
    if (evmTimer && !stopped) {
      clearTimeout(evmTimer);
      watchEvm();
    }
  });
  watchEvm();

  return {
    jobs,
    async stop(graceMs) {
      stopped = true;
      stopPoking();
      if (watchTimer) clearTimeout(watchTimer);
      if (evmTimer) clearTimeout(evmTimer);
      stopRinging();
      services.testClocks.listenWith(() => false);
      await Promise.all([relay.stop(), watchRun, evmRun ?? Promise.resolve(), wakes.stop()]);
      await jobs.stop(graceMs);
    },
  };
}
