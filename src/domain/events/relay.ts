import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Environment } from '../auth/permissions.js';
import type { StoredEvent } from './event.js';
import type { Database } from '../../db/client.js';
import { queryRows } from '../../db/client.js';
import { toSafeNumber } from '../../db/columns.js';
import { onEventWrites } from '../../db/plain-sql.js';
import { attachPool } from '../../db/pool-routing.js';
import { dedicatedPool } from '../../db/dedicated-pool.js';
import { observeStampedEvents, type StampedEvent } from '../../observability/money-metrics.js';
import { detachedFromTraces } from '../../observability/tracing.js';
import { fanOutBehind, fanOutStatement } from './fan-out.js';

/** Any fixed number; only one relay across all instances stamps at a time. */
export const RELAY_LOCK_KEY = 7_262_020_002;

/**
 * The stamp of up to `batchSize` committed events (more when the last transaction taken has more),
 * each transaction's events whole and in the order it wrote them, transactions in `txid` order.
 * `head` finds the last transaction the batch reaches; `ready` then takes every unstamped event up
 * to and including that transaction's, so a transaction is never split across two rounds (another
 * transaction committing in between could otherwise be numbered inside it). Exported for tests
 * that play a relay stopped part-way through its round, or one of a release that did not fan out.
 */
export const stampStatement = (batchSize: number) => `
  with base as (select coalesce(max(seq), 0) as top from events),
  head as (
    select txid from events
    where seq is null and current_setting('pgw.relay_locked', true) = 'true'
    order by txid, ordinal
    limit ${Math.trunc(batchSize)}
  ),
  last as (select txid from head order by txid desc limit 1),
  ready as (
    select id, row_number() over (order by e.txid, e.ordinal) as rn
    from events e, last
    where e.seq is null and e.txid <= last.txid
  )
  update events e set seq = base.top + ready.rn
  from ready, base
  where e.id = ready.id
  returning e.id, e.source_id, e.seq, e.user_id, e.environment, e.data, e.created_at,
    e.type, e.data->>'type' as kind, e.data->>'status' as status,
    e.data->>'currency' as currency, e.data->>'amount' as amount,
    extract(epoch from clock_timestamp() - coalesce(e.written_at, e.created_at)) * 1000 as lag_ms`;

/** Whether committed events are still unstamped, and stamped ones wait for fan-out. */
const checkStatement = `select exists (select 1 from events where seq is null) as waiting, ${fanOutBehind} as behind`;

/**
 * One relay round as one round trip: a multi-statement simple query is one message to the server,
 * and each statement in it still takes its own snapshot. The lock is taken (transaction-scoped) by
 * the second statement and noted in a transaction-local setting; the stamp, a separate statement,
 * takes its snapshot only after the lock is held, so it sees every stamp a previous holder
 * committed. That needs READ COMMITTED (a snapshot per statement), named in the `begin` so a server
 * or role default of REPEATABLE READ (one snapshot, taken before the lock is granted) cannot make a
 * round number from a stale max. Then, when `fanOut`, the webhook fan-out of the events stamped so
 * far (fan-out.ts), a statement of its own so that it sees this round's stamps, in the same
 * transaction: stamps and deliveries commit together. Last, whether committed events are still
 * unstamped (past the batch, or committed while the round ran) or stamped ones wait for fan-out,
 * so the loop knows to come back soon.
 */
const roundText = (batchSize: number, wait: boolean, fanOut: boolean) =>
  [
    'begin isolation level read committed',
    wait
      ? `select pg_advisory_xact_lock(${RELAY_LOCK_KEY}), set_config('pgw.relay_locked', 'true', true) as locked`
      : `select set_config('pgw.relay_locked', pg_try_advisory_xact_lock(${RELAY_LOCK_KEY})::text, true) as locked`,
    stampStatement(batchSize),
    ...(fanOut ? [fanOutStatement(batchSize)] : []),
    checkStatement,
    'commit',
  ].join(';\n');

type StampedRow = StampedEvent & {
  lag_ms: unknown;
  id: string;
  source_id: string | null;
  seq: unknown;
  user_id: string;
  environment: Environment;
  data: unknown;
  created_at: unknown;
};

export interface RelayRound {
  /** How many events this round stamped. */
  stamped: number;
  /** How many webhook deliveries (each with its job) this round wrote. */
  fannedOut: number;
  /** Whether this round held the relay lock (false: another relay was stamping). */
  locked: boolean;
  /** Whether committed events were left unstamped (committed while the round ran, or past the batch). */
  waiting: boolean;
  /** Whether stamped events were left waiting for fan-out (past the batch, or stamped by another relay). */
  behind: boolean;
}

/** How many statements (round trips) one relay round sends, for benchmarks that count the request's own. */
export const RELAY_ROUND_TRIPS = 1;

async function runRound(
  db: Database,
  batchSize: number,
  wait: boolean,
  fanOut: boolean,
  connection: pg.Pool | undefined,
): Promise<RelayRound & { rows: StampedRow[] }> {
  const client = connection ?? (db as unknown as { $client?: unknown }).$client;
  if (client instanceof pg.Pool) {
    const session = await client.connect();
    let results: pg.QueryResult[];
    try {
      results = (await session.query(roundText(batchSize, wait, fanOut))) as unknown as pg.QueryResult[];
    } catch (error) {
      // The session may be left inside the failed transaction: discard the connection.
      session.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    session.release();
    const rows = results[2]!.rows as StampedRow[];
    const check = results[fanOut ? 4 : 3]!.rows[0];
    return {
      rows,
      stamped: rows.length,
      fannedOut: fanOut ? Number(results[3]!.rows[0]?.fanned_out ?? 0) : 0,
      locked: results[1]!.rows[0]?.locked === 'true',
      waiting: check?.waiting === true,
      behind: check?.behind === true,
    };
  }
  // PGlite (one connection, no round trips to save): the same statements in a transaction.
  return db.transaction(async (tx) => {
    await tx.execute(sql.raw('set transaction isolation level read committed'));
    const [lock] = await queryRows<{ locked: unknown }>(
      tx,
      wait
        ? sql.raw(
            `select pg_advisory_xact_lock(${RELAY_LOCK_KEY}), set_config('pgw.relay_locked', 'true', true) as locked`,
          )
        : sql.raw(
            `select set_config('pgw.relay_locked', pg_try_advisory_xact_lock(${RELAY_LOCK_KEY})::text, true) as locked`,
          ),
    );
    const locked = lock?.locked === 'true';
    if (!locked) return { rows: [], stamped: 0, fannedOut: 0, locked, waiting: false, behind: false };
    const rows = await queryRows<StampedRow>(tx, sql.raw(stampStatement(batchSize)));
    const [fanned] = fanOut ? await queryRows<{ fanned_out: unknown }>(tx, sql.raw(fanOutStatement(batchSize))) : [];
    const [left] = await queryRows<{ waiting: unknown; behind: unknown }>(tx, sql.raw(checkStatement));
    return {
      rows,
      stamped: rows.length,
      fannedOut: Number(fanned?.fanned_out ?? 0),
      locked,
      waiting: left?.waiting === true,
      behind: left?.behind === true,
    };
  });
}

/**
 * Stamps `seq` on committed events: each gets the next number after the highest stamped so far,
 * one transaction's events together and in the order it wrote them (`ordinal`).
 *
 * Why a reader resuming "after seq N" never skips an event, with no wait for open transactions:
 * - numbers are handed out only under the relay lock, from `max(seq)` read by a statement whose
 *   snapshot is taken after the lock is held. PostgreSQL makes a commit visible before it releases
 *   the committing transaction's locks, so that snapshot sees every earlier round's stamps: each
 *   round's numbers are above every number before it, and the rounds commit in number order;
 * - so the stamped numbers any snapshot sees are always 1..M with no hole, and a reader that has
 *   read up to N has seen every number up to N;
 * - an event whose transaction was still open during a round is invisible to it and is stamped by
 *   a later round, above M: a reader at N ≤ M reads it next time.
 * What order it gives: rounds follow commits (an event committed before a round is numbered no
 * later than that round); within a round, transactions go by `txid`. Causal order holds: when T2
 * began after T1 committed, T2's transaction id was assigned after T1's, and T2's events cannot be
 * visible to a round that does not see T1's, so T1's events are numbered first. Transactions that
 * overlapped in time have no order to keep.
 *
 * So an open transaction anywhere (another database of the cluster, a long report, an idle session
 * in a transaction) delays nobody's events: the relay used to stamp only below the cluster's
 * oldest running transaction id (`pg_snapshot_xmin`), which ordered `seq` by `txid` and made every
 * event wait for the slowest transaction on the server, for no reader's benefit.
 *
 * The same round fans the stamped events out to webhook deliveries (fan-out.ts), in the same
 * transaction: the batch after the fan-out cursor, so events any relay stamped are fanned out once.
 *
 * Returns how many events were stamped. By default it gives up at once (returning 0) when another
 * relay holds the lock; `wait` blocks for the lock instead, for callers that need the stamp now.
 * `connection`: a pool of its own to run on (see startRelay), instead of the database's.
 */
export async function stampCommittedEvents(
  db: Database,
  options: { batchSize?: number; wait?: boolean; connection?: pg.Pool } = {},
): Promise<number> {
  return (await stampRound(db, options)).stamped;
}

export interface RoundOptions {
  batchSize?: number;
  wait?: boolean;
  /**
   * Whether the round fans out too (default true). The loop leaves it out of rounds that can have
   * nothing to fan out, since the statement's planning is most of an empty round's cost; the
   * cursor makes a later round fan out whatever one without it stamped.
   */
  fanOut?: boolean;
  connection?: pg.Pool;
}

/** One relay round, with what the loop needs to decide when to run the next. */
export async function stampRound(db: Database, options: RoundOptions = {}): Promise<RelayRound> {
  const { rows, ...round } = await runRound(
    db,
    options.batchSize ?? 1000,
    options.wait ?? false,
    options.fanOut ?? true,
    options.connection,
  );
  // Counted once committed: each event is stamped once across all instances.
  observeStampedEvents(rows);
  const readers = batchReaders.get(db);
  if (readers && readers.size > 0 && rows.length > 0) {
    const batch = rows
      .map(
        (row): StoredEvent => ({
          // As toStoredEvent (event-row.ts) reads it: an upstream's event keeps the upstream's id.
          id: row.source_id ?? row.id,
          type: row.type,
          created: Math.floor(new Date(row.created_at as string | Date).getTime() / 1000),
          data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
          userId: row.user_id,
          environment: row.environment,
          seq: Number(row.seq),
        }),
      )
      .sort((a, b) => a.seq! - b.seq!);
    for (const reader of readers) reader(batch);
  }
  if (stampListeners.size > 0 && rows.length > 0) {
    const lags = rows.map((row) => Number(row.lag_ms));
    for (const listener of stampListeners) listener(lags);
  }
  return round;
}

const batchReaders = new WeakMap<Database, Set<(batch: StoredEvent[]) => void>>();

/**
 * Hears every batch this process stamps on `db`, as stored events in `seq` order (a gap-free run:
 * the first follows the highest `seq` stamped before). The event feed takes them from here instead
 * of reading them back. Returns the unsubscribe.
 */
export function onStampedBatch(db: Database, reader: (batch: StoredEvent[]) => void): () => void {
  let readers = batchReaders.get(db);
  if (!readers) batchReaders.set(db, (readers = new Set()));
  readers.add(reader);
  return () => readers.delete(reader);
}

const stampListeners = new Set<(lagsMs: number[]) => void>();

/**
 * Hears, for every batch this process stamps, each event's lag in milliseconds from its
 * `written_at` (the database's clock in the statement that wrote it, the last before its commit
 * on the money paths) to its stamp: an upper bound of commit → `seq` lag, which readers wait out.
 * For benchmarks and metrics; returns the unsubscribe.
 */
export function onStamped(listener: (lagsMs: number[]) => void): () => void {
  stampListeners.add(listener);
  return () => stampListeners.delete(listener);
}

const relayHints = new Set<() => void>();

/**
 * Tells this process's relay loops that an event was just recorded: its transaction commits in a
 * moment, so the relay looks soon (and keeps looking briefly) instead of at its idle poll.
 * Called by recordEvent; a hint that comes to nothing costs one empty round.
 */
export function hintRelays(): void {
  for (const hint of relayHints) hint();
}
// Plain statements that insert events (db/plain-sql.ts) hint as recordEvent does, whoever runs them.
onEventWrites(hintRelays);

/**
 * Registers a listener told whenever this process records events (as the relay loops are): a process
 * that runs no relay passes the news on to the processes that do (wake-channel.ts). Returns the
 * unsubscribe.
 */
export function onRelayHint(listener: () => void): () => void {
  relayHints.add(listener);
  return () => relayHints.delete(listener);
}

export interface RelayLoopOptions {
  /**
   * The first wait after a round that found nothing to do; each further empty round doubles it, up
   * to `idleMaxMs`. Events this process records hint the loop at once; events of processes that run
   * no relay arrive by their wake (wake-channel.ts); anything else is found at the latest after
   * `idleMaxMs`.
   */
  idleMs?: number;
  /** A number, or read before each doubling (the workers' is longer while the wake channel listens). */
  idleMaxMs?: number | (() => number | undefined);
  /** Told each time the loop, having found nothing to do, sleeps, and for how long. */
  onIdle?: (sleepMs: number) => void;
  /** Next round while events are arriving or left over from a full batch. */
  busyMs?: number;
  /** After a hint, how long the loop keeps to `busyMs` (the hinted transaction may commit late). */
  lingerMs?: number;
  batchSize?: number;
  /**
   * Called after every round that stamped events or wrote webhook deliveries (ring the doorbell:
   * subscriptions have events to read, the webhooks lane deliveries to claim).
   */
  onStamped?: (stamped: number, fannedOut: number) => void;
  /** Called after every round (benchmarks count the relay's own commits and round trips). */
  onRound?: (round: RelayRound) => void;
  /** A failed round; the loop waits for what this returns, then carries on at the idle poll. */
  onError?: (error: unknown) => unknown;
}

export interface RelayLoop {
  /** Run a round soon (as hintRelays does). */
  hint(): void;
  stop(): Promise<void>;
}

/** How long after a hint the idle loop keeps to its first wait: the hinted transaction may commit late. */
const LATE_COMMIT_MS = 2_000;

/**
 * The relay as the workers run it. What paces commit → `seq`:
 * - the wake-up: a local hint from recordEvent, so a round runs right after the commit rather than
 *   at the next idle poll; rounds follow each other every `busyMs` while events arrive, while
 *   committed events are left over, and while another relay holds the lock;
 * - the connection: on PostgreSQL the relay has one connection of its own, so it never queues
 *   behind requests or jobs for a pooled one (it used to share the jobs pool with 32 webhook slots);
 * - the round: one round trip (see roundText), the lock, stamp, webhook fan-out and check in one
 *   message; a round that left stamped events for fan-out is followed by the next at once. The
 *   fan-out is left out of rounds that can have nothing to fan out (no hint since the last round,
 *   which stamped nothing and left nothing behind): planning it is most of an empty round's cost;
 * - nothing else: a committed event is stamped by the next round, whatever else is open.
 */
export function startRelay(db: Database, options: RelayLoopOptions = {}): RelayLoop {
  const connection = dedicatedPool(db);
  const detachPool = connection ? attachPool(db, 'relay', connection) : undefined;
  const onPostgres = connection !== undefined || (db as unknown as { $client?: unknown }).$client instanceof pg.Pool;
  const idleMs = options.idleMs ?? 100;
  const longest = options.idleMaxMs;
  const idleMaxMs = () => Math.max(idleMs, (typeof longest === 'function' ? longest() : longest) ?? 2_000);
  // The next idle wait: doubles while rounds find nothing, back to idleMs on any sign of events.
  let idleWait = idleMs;
  // The embedded database has one connection, shared with requests: its relay looks less often.
  const busyMs = options.busyMs ?? (onPostgres ? 5 : 20);
  const lingerMs = options.lingerMs ?? 250;
  const batchSize = options.batchSize ?? 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Number.POSITIVE_INFINITY;
  let running: Promise<void> | undefined;
  let hintedDuringRound = false;
  let lastHintAt = Number.NEGATIVE_INFINITY;
  // Whether the next round may have events to fan out: at first, after a hint, and after a round
  // that stamped events or left some behind.
  let fanOutNext = true;

  const schedule = (ms: number) => {
    if (stopped) return;
    const at = Date.now() + ms;
    if (timer && dueAt <= at) return;
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(run, ms);
  };
  // In no trace: a hint comes from inside a request, and every timer and promise made here would
  // otherwise carry that request's trace into every round after it.
  const run = detachedFromTraces(() => {
    timer = undefined;
    dueAt = Number.POSITIVE_INFINITY;
    if (stopped) return;
    if (running) {
      hintedDuringRound = true;
      return;
    }
    hintedDuringRound = false;
    const fanOut = fanOutNext;
    fanOutNext = false;
    running = stampRound(db, { batchSize, connection, fanOut })
      .then((round) => {
        if (round.stamped > 0 || round.behind || round.waiting || !round.locked) fanOutNext = true;
        options.onRound?.(round);
        if (round.stamped > 0 || round.fannedOut > 0) options.onStamped?.(round.stamped, round.fannedOut);
        if (round.stamped > 0 || round.fannedOut > 0) idleWait = idleMs;
        if (round.stamped >= batchSize || round.behind) return 0;
        const lively = round.waiting || !round.locked || hintedDuringRound || Date.now() - lastHintAt < lingerMs;
        if (lively) return busyMs;
        // Never past the longest wait as it stands now (it shortens when the wake channel loses its session).
        const wait = Math.min(idleWait, idleMaxMs());
        // Within LATE_COMMIT_MS of a hint the loop keeps to idleMs: the hinted transaction may commit
        // late. A fixed window, not the longest wait: a 30 s one kept the loop at idleMs for 30 s after
        // every event.
        idleWait = Date.now() - lastHintAt >= LATE_COMMIT_MS ? Math.min(wait * 2, idleMaxMs()) : wait;
        options.onIdle?.(wait);
        return wait;
      })
      .catch(async (error) => {
        fanOutNext = true;
        idleWait = idleMs;
        await options.onError?.(error);
        return idleMs;
      })
      .then((next) => {
        running = undefined;
        schedule(next);
      });
  });
  const hint = () => {
    lastHintAt = Date.now();
    fanOutNext = true;
    idleWait = idleMs;
    if (running) hintedDuringRound = true;
    // PostgreSQL: the hinted transaction commits within a moment. PGlite: the round queues behind
    // the transaction (one connection) and so runs right after its commit.
    else schedule(onPostgres ? 1 : 0);
  };
  relayHints.add(hint);
  run();
  return {
    hint,
    async stop() {
      stopped = true;
      relayHints.delete(hint);
      clearTimeout(timer);
      await running;
      detachPool?.();
      await connection?.end().catch(() => undefined);
    },
  };
}

/**
 * Committed events still waiting for their `seq`, and how long the oldest has waited, on the
 * database's own clock (the one `written_at` was read from), for the gauges and the doctor.
 */
export async function unstampedBacklog(db: Database): Promise<{ count: number; oldestSeconds: number }> {
  const [row] = await queryRows<{ n: unknown; lag: unknown }>(
    db,
    sql`/* unstampedBacklog */ select count(*) as n,
      coalesce(extract(epoch from clock_timestamp() - min(coalesce(written_at, created_at))), 0)::float8 as lag
      from events where seq is null`,
  );
  return { count: toSafeNumber(row?.n ?? 0), oldestSeconds: Math.max(0, Number(row?.lag ?? 0)) };
}

/**
 * Stamped events the relay has not fanned out to webhook deliveries yet: the distance from its
 * fan-out cursor to the highest `seq` (seq is gap-free), for the gauges. Two index reads.
 */
export async function fanOutBacklog(db: Database): Promise<number> {
  const [row] = await queryRows<{ n: unknown }>(
    db,
    sql`/* fanOutBacklog */ select greatest(coalesce((select max(seq) from events), 0)
      - coalesce((select seq from event_fan_out where id = 1), 0), 0) as n`,
  );
  return toSafeNumber(row?.n ?? 0);
}

/** Highest stamped position, for readers that want to start "from now". */
export async function latestEventSeq(db: Database): Promise<number> {
  const [row] = await queryRows<{ top: unknown }>(db, sql`select coalesce(max(seq), 0) as top from events`);
  return toSafeNumber(row?.top ?? 0);
}
