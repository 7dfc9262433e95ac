import pg from 'pg';

/**
 * Samples, every 20 ms on a connection of its own, how many of one database's client backends are
 * running a statement and how many of those wait on a heavyweight lock, by what they wait on: a row
 * (`transactionid` for the first waiter on a row or on a unique key another transaction is
 * inserting, `tuple` for the ones queued behind it), an advisory lock, or anything else. Per round it
 * gives the mean of each. A path serialised on one hot row has nearly all its busy backends waiting;
 * paths whose rows rarely meet have few — but how many also grows with how long each transaction
 * holds its locks (the bare-pg ceiling holds them over 15 round trips), so compare paths of the
 * same shape. The sampler's own queries run in the database measured, and count in its CPU.
 */
export interface LockWaits {
  /** Mean client backends running a statement (waiting ones included). */
  active: number;
  /** Mean of those waiting on a row lock. */
  rows: number;
  /** Mean of those waiting on an advisory lock (an idempotency key's, the relay's). */
  advisory: number;
  /** Mean of those waiting on any other heavyweight lock. */
  other: number;
  samples: number;
}

const SAMPLE = `
  select count(*) filter (where a.state = 'active') as active,
    count(*) filter (where a.wait_event_type = 'Lock' and a.wait_event in ('transactionid', 'tuple')) as rows,
    count(*) filter (where a.wait_event_type = 'Lock' and a.wait_event = 'advisory') as advisory,
    count(*) filter (where a.wait_event_type = 'Lock' and a.wait_event not in ('transactionid', 'tuple', 'advisory')) as other
  from pg_stat_activity a
  where a.datname = current_database() and a.backend_type = 'client backend' and a.pid <> pg_backend_pid()`;

const COUNTS = ['active', 'rows', 'advisory', 'other'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;
const zero = (): Counts => ({ active: 0, rows: 0, advisory: 0, other: 0 });

export interface LockWaitSampler {
  /** The means since the last call, and a fresh start. */
  take(): LockWaits;
  stop(): Promise<void>;
}

export async function lockWaitSampler(connectionString: string | undefined): Promise<LockWaitSampler | undefined> {
  if (!connectionString) return undefined;
  const client = new pg.Client({ connectionString });
  // The bench drops its database with (force) when it ends, which ends this session: not a crash.
  client.on('error', () => undefined);
  await client.connect();
  let sums = zero();
  let samples = 0;
  let sampling = false;
  const timer = setInterval(() => {
    if (sampling) return;
    sampling = true;
    client
      .query(SAMPLE)
      .then(({ rows: [r] }) => {
        for (const count of COUNTS) sums[count] += Number(r[count]);
        samples++;
      })
      .catch(() => undefined)
      .finally(() => {
        sampling = false;
      });
  }, 20);
  return {
    take() {
      const n = Math.max(1, samples);
      const means = zero();
      for (const count of COUNTS) means[count] = sums[count] / n;
      const taken = { ...means, samples };
      sums = zero();
      samples = 0;
      return taken;
    },
    async stop() {
      clearInterval(timer);
      await client.end().catch(() => undefined);
    },
  };
}
