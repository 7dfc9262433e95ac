import { type Clock, wallTimeOf } from '../clock.js';
import type { JobOutcome } from './job-runner.js';

const DAY_MS = 24 * 3600_000;
const FIVE_MINUTES_MS = 5 * 60_000;

/**
 * The outcome of a job that asks a provider until a record is final (reconciliation, status
 * polls): done once it is final; after `forMs` since `since`, failed with `stuck` (an operator
 * looks); otherwise asked again in `everyMs`. `clock` is the record's account's (`since` is read
 * from it); the retry's time is given back in wall time, as jobs are stored.
 */
export function keepPolling(
  clock: Clock,
  poll: { final: boolean; since: Date; stuck: string; forMs?: number; everyMs?: number },
): JobOutcome {
  if (poll.final) return { status: 'done' };
  const now = clock.now().getTime();
  if (now - poll.since.getTime() > (poll.forMs ?? DAY_MS)) return { status: 'failed', error: poll.stuck };
  return { status: 'retry', at: wallTimeOf(clock, new Date(now + (poll.everyMs ?? FIVE_MINUTES_MS))) };
}
