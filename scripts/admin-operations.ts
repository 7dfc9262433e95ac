import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { wakeNow } from '../src/db/wake-channel.js';
import { systemClock } from '../src/domain/clock.js';
import { isUuid } from '../src/domain/ids.js';
import { runDoctor } from '../src/operations/doctor.js';
import {
  discardDelivery,
  discardJobs,
  failedDeliveries,
  failedJobs,
  queueDepth,
  retryDelivery,
  retryFailedJobs,
} from '../src/operations/queue-report.js';
import type { Services } from '../src/services.js';

/**
 * The admin CLI's operator commands (background work and health):
 *
 *   admin queue                                  queue depth per job kind: due, scheduled, running, failed
 *   admin failed-jobs [--kind K] [--limit N]     jobs that failed for good, with their last error
 *   admin retry-job --id <job> | --kind K        put failed jobs back in line, due now
 *   admin discard-job --id <job> | --kind K      set failed (or pending) jobs aside for good
 *   admin failed-deliveries [--limit N]          webhook deliveries that ran out of retries, with the last answer
 *   admin retry-delivery --id <delivery>         send a failed delivery once more
 *   admin discard-delivery --id <delivery>       stop a pending delivery's retries
 *   admin doctor                                 check configuration, database, Redis and the ledger; exit 1 on a problem
 */
export const OPERATOR_COMMANDS = [
  'queue',
  'failed-jobs',
  'retry-job',
  'discard-job',
  'failed-deliveries',
  'retry-delivery',
  'discard-delivery',
  'doctor',
];

export interface OperatorValues {
  id?: string | undefined;
  kind?: string | undefined;
  limit?: string | undefined;
}

export class OperatorUsageError extends Error {}

type Output = { json: unknown; text: string };

export async function runOperatorCommand(
  services: Services,
  command: string | undefined,
  values: OperatorValues,
): Promise<Output | undefined> {
  const now = services.clock.now();
  const db = services.db;
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new OperatorUsageError('--limit must be a whole number from 1 to 1000');
  const selection = () => {
    if (values.id !== undefined) {
      if (!isUuid(values.id)) throw new OperatorUsageError('--id must be a job id (a UUID)');
      return { id: values.id };
    }
    if (values.kind) return { kind: values.kind };
    throw new OperatorUsageError('Say which jobs: --id <job id> or --kind <kind>');
  };
  const deliveryId = () => {
    if (!values.id || !isUuid(values.id)) throw new OperatorUsageError('--id must be a webhook delivery id (a UUID)');
    return values.id;
  };
  switch (command) {
    case 'queue': {
      const depth = await queueDepth(db, now);
      const header = `${'kind'.padEnd(28)} ${'due'.padStart(7)} ${'later'.padStart(7)} ${'running'.padStart(7)} ${'failed'.padStart(7)}  oldest due`;
      const lines = depth.map(
        (d) =>
          `${d.kind.padEnd(28)} ${String(d.due).padStart(7)} ${String(d.scheduled).padStart(7)} ${String(d.running).padStart(7)} ${String(d.failed).padStart(7)}  ${d.due ? `${d.oldestDueSeconds} s` : '-'}`,
      );
      return { json: depth, text: depth.length ? [header, ...lines].join('\n') : 'No pending or failed jobs.' };
    }
    case 'failed-jobs': {
      const jobs = await failedJobs(db, { ...(values.kind ? { kind: values.kind } : {}), limit });
      const lines = jobs.map(
        (j) => `${j.id}  ${j.kind}  ${j.attempts} attempts  ${j.failedAt}\n    ${j.lastError ?? '(no error recorded)'}`,
      );
      return { json: jobs, text: lines.join('\n') || 'No failed jobs.' };
    }
    case 'retry-job': {
      const retried = await retryFailedJobs(db, selection(), now);
      // Due now: the running instances hear it at once rather than at their lanes' idle waits.
      if (retried > 0) await wakeNow(db, 'jobs');
      return { json: { retried }, text: `${retried} failed job(s) put back in line, due now.` };
    }
    case 'discard-job': {
      const discarded = await discardJobs(db, selection(), now);
      return { json: { discarded }, text: `${discarded} job(s) set aside; they will not run again.` };
    }
    case 'failed-deliveries': {
      const deliveries = await failedDeliveries(db, limit);
      const lines = deliveries.map(
        (d) =>
          `${d.id}  ${d.eventType} → ${d.endpointHost}  ${d.attempts} attempts  ${d.failedAt}\n    last: ${d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? 'no attempt recorded')}`,
      );
      return { json: deliveries, text: lines.join('\n') || 'No failed webhook deliveries.' };
    }
    case 'retry-delivery': {
      const id = deliveryId();
      if (!(await retryDelivery(db, id, now))) throw new OperatorUsageError(`No failed webhook delivery ${id}`);
      await wakeNow(db, 'jobs');
      return { json: { retried: id }, text: `Delivery ${id} will be sent once more now.` };
    }
    case 'discard-delivery': {
      const id = deliveryId();
      if (!(await discardDelivery(db, id, now))) throw new OperatorUsageError(`No pending webhook delivery ${id}`);
      return { json: { discarded: id }, text: `Delivery ${id} will not be retried.` };
    }
    default:
      return undefined;
  }
}

/**
 * `doctor` runs before anything else can fail: a configuration that does not parse, or a database
 * that does not open, is what it reports rather than a crash. Returns the exit code.
 */
export async function runDoctorCommand(json: boolean): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    const detail = error instanceof ConfigError ? error.message : String(error);
    const checks = [{ name: 'configuration', ok: false, detail }];
    process.stdout.write(
      json ? `${JSON.stringify({ ok: false, checks }, null, 2)}\n` : `problem  configuration: ${detail}\n`,
    );
    return 1;
  }
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let openError: unknown;
  try {
    // Doctor looks; it never migrates.
    database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      pgliteDataDir: config.PGLITE_DATA_DIR,
      poolSize: 2,
      migrate: false,
    });
  } catch (error) {
    openError = error;
  }
  try {
    const checks = await runDoctor(config, database?.db, systemClock.now(), openError);
    const ok = checks.every((c) => c.ok);
    if (json) process.stdout.write(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
    else
      process.stdout.write(
        `${checks.map((c) => `${c.ok ? 'ok      ' : 'problem '} ${c.name}: ${c.detail}`).join('\n')}\n${ok ? 'Nothing wrong found.' : 'Problems found (above).'}\n`,
      );
    return ok ? 0 : 1;
  } finally {
    await database?.close();
  }
}
