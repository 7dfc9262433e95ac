import type { FastifyBaseLogger } from 'fastify';
import { stampCommittedEvents } from './domain/events/relay.js';
import { type JobHandler, JobRunner } from './domain/jobs/job-runner.js';
import type { Services } from './services.js';
import { offrampJobHandlers } from './domain/offramp/offramp-jobs.js';
import { walletJobHandlers } from './domain/wallet/wallet-jobs.js';
import { billJobHandlers } from './domain/bills/bill-jobs.js';
import { WebhookDeliveryHandler } from './domain/webhooks/delivery-worker.js';
import { SolanaConfirmHandler } from './domain/solana/solana-jobs.js';
import { LedgerCheckHandler, scheduleLedgerCheck } from './domain/ledger/ledger-check-job.js';

export interface Workers {
  jobs: JobRunner;
  stop(graceMs: number): Promise<void>;
}

/**
 * Background work of one process: the outbox relay (stamps event order; one instance at a time
 * holds its lock) and the job runner (leases, so any number of processes share the queue).
 */
export function startWorkers(
  services: Services,
  log: FastifyBaseLogger,
  handlers: JobHandler[] = [],
  relayEveryMs = 100,
): Workers {
  let stopped = false;
  let relayTimer: NodeJS.Timeout | undefined;
  let relayRun: Promise<unknown> = Promise.resolve();
  const relay = () => {
    if (stopped) return;
    relayRun = stampCommittedEvents(services.db)
      .then((stamped) => {
        if (stamped > 0) services.doorbell.ring();
      })
      .catch((error) => log.error({ err: error }, 'event relay failed'))
      .finally(() => {
        if (!stopped) relayTimer = setTimeout(relay, relayEveryMs);
      });
  };
  relay();

  const jobs = new JobRunner(
    services.db,
    services.clock,
    [
      new WebhookDeliveryHandler(services.db, services.clock, services.secrets),
      ...offrampJobHandlers(services.offramp, services.clock),
      ...walletJobHandlers(services.deposits, services.payouts, services.clock),
      ...billJobHandlers(services.bills, services.clock),
      new SolanaConfirmHandler(services.solanaTransfers, services.clock),
      new LedgerCheckHandler(
        services.ledgerCheck,
        services.db,
        services.clock,
        services.config.LEDGER_CHECK_EVERY_MINUTES * 60_000,
      ),
      ...handlers,
    ],
    {
      leaseMs: services.config.JOB_LEASE_MS,
      onError: (error, job) => log.error({ err: error, jobId: job?.id, kind: job?.kind }, 'job failed'),
    },
  );
  jobs.start();
  scheduleLedgerCheck(services.db, services.clock.now()).catch((error) =>
    log.error({ err: error }, 'scheduling the ledger check failed'),
  );

  // Production Solana wallets are polled for arrivals (only when an RPC URL is configured).
  let watchTimer: NodeJS.Timeout | undefined;
  let watchRun: Promise<unknown> = Promise.resolve();
  const watch = () => {
    if (stopped || !services.solanaIncoming.active) return;
    watchRun = services.solanaIncoming
      .poll()
      .catch((error) => log.error({ err: error }, 'Solana incoming watch failed'))
      .finally(() => {
        if (!stopped) watchTimer = setTimeout(watch, 5_000);
      });
  };
  watch();

  return {
    jobs,
    async stop(graceMs) {
      stopped = true;
      if (relayTimer) clearTimeout(relayTimer);
      if (watchTimer) clearTimeout(watchTimer);
      await Promise.all([relayRun, watchRun]);
      await jobs.stop(graceMs);
    },
  };
}
