import { getTableName, type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { LIFECYCLES } from '../state-tables.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** What is kept, and for how long (docs/operations.md, "Retention"). */
export interface RetentionPolicy {
  /** Events, and the webhook deliveries and attempts of those events. At least 30 days. */
  eventsDays: number;
  /** Finished (done or failed) jobs. Pending jobs are never pruned. */
  jobsDays: number;
  /** Idempotency keys, by when they were first used. At least 24 hours. */
  idempotencyHours: number;
  /** Rows per DELETE: each batch is its own short transaction. */
  batchSize: number;
  /**
   * The state history of finished operations, by when the operation finished. At least 30 days.
   * Default 90. The history of an operation still open is kept whatever its age.
   */
  historyDays?: number;
  /** Signatures the sandbox chains executed, by when they ran. At least 1 day. Default 7. */
  sandboxSignaturesDays?: number;
}

export interface Pruned {
  jobs: number;
  webhookAttempts: number;
  webhookDeliveries: number;
  events: number;
  idempotencyKeys: number;
  /** A facade's settled records of its mutations' keys (never one whose outcome is unknown). */
  facadeKeys: number;
  /** A facade's upstream records' states, untouched as long as events are kept. */
  facadeRecordStates: number;
}

export interface PrunedHistory {
  operationTransitions: number;
  sandboxSignatures: number;
}

/** Deletes, batch by batch, until a batch comes back short. Each statement commits on its own. */
async function inBatches(db: Executor, batch: (limit: number) => SQL, limit: number): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await queryRows(db, batch(limit));
    total += rows.length;
    if (rows.length < limit) return total;
  }
}

/**
 * One pass of the retention policy. Deliveries still pending are kept (with their event) whatever
 * their age: a delivery is pruned only once finished, and an event only once none of its
 * deliveries is left. Unstamped events (no `seq` yet) are never pruned, nor is the newest stamped one.
 */
export async function pruneExpired(db: Executor, now: Date, policy: RetentionPolicy): Promise<Pruned> {
  const ts = (ms: number) => sql`${new Date(now.getTime() - ms).toISOString()}::timestamptz`;
  const jobsBefore = ts(Math.max(1, policy.jobsDays) * DAY_MS);
  const eventsBefore = ts(Math.max(30, policy.eventsDays) * DAY_MS);
  const keysBefore = ts(Math.max(24, policy.idempotencyHours) * HOUR_MS);
  const n = policy.batchSize;

  const jobs = await inBatches(
    db,
    (limit) => sql`delete from jobs where id in (
      select id from jobs where status <> 'pending' and updated_at < ${jobsBefore} limit ${limit}
    ) returning 1`,
    n,
  );
  const oldFinishedDeliveries = sql`select d.id from webhook_deliveries d join events e on e.id = d.event_id
    where e.created_at < ${eventsBefore} and d.status <> 'pending'`;
  const webhookAttempts = await inBatches(
    db,
    (limit) => sql`delete from webhook_attempts where id in (
      select a.id from webhook_attempts a where a.delivery_id in (${oldFinishedDeliveries}) limit ${limit}
    ) returning 1`,
    n,
  );
  const webhookDeliveries = await inBatches(
    db,
    (limit) => sql`delete from webhook_deliveries where id in (
      select id from (${oldFinishedDeliveries}) old
      where not exists (select 1 from webhook_attempts a where a.delivery_id = old.id)
      limit ${limit}
    ) returning 1`,
    n,
  );
  const events = await inBatches(
    db,
    (limit) => sql`delete from events where id in (
      select e.id from events e
      where e.created_at < ${eventsBefore} and e.seq is not null
        -- The newest stamped event stays, however old: the relay numbers from max(seq), so pruning
        -- it would restart numbering below the cursors readers hold, and they would skip what follows.
        and e.seq < (select max(seq) from events)
        -- Fanned out already: the relay writes an event's deliveries after stamping it, from a
        -- cursor; one pruned before that would never reach its endpoints.
        and e.seq <= (select seq from event_fan_out where id = 1)
        and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
      limit ${limit}
    ) returning 1`,
    n,
  );
  const idempotencyKeys = await inBatches(
    db,
    (limit) => sql`delete from idempotency_keys k using (
      select user_id, environment, operation, key from idempotency_keys
      where created_at < ${keysBefore} and (status = 'done' or locked_until is null or locked_until < ${ts(0)})
      limit ${limit}
    ) old
    where k.user_id = old.user_id and k.environment = old.environment and k.operation = old.operation and k.key = old.key
    returning 1`,
    n,
  );
  // A facade's records of its mutations' keys, once settled, as long as service mode keeps its keys;
  // one whose outcome is unknown is money nobody has accounted for, and stays until it is settled.
  const facadeKeys = await inBatches(
    db,
    (limit) => sql`delete from facade_keys where id in (
      select id from facade_keys
      where state in ('succeeded', 'failed') and resolved_at < ${keysBefore}
      limit ${limit}
    ) returning 1`,
    n,
  );
  // A facade's record states (upstream-event-log.ts) no event has touched for as long as events are
  // kept: an event of the record is refused inbound after 7 days and the gap-filling job looks 7
  // days back, so nothing that could still arrive needs what such a row remembers. One that comes
  // anyway starts the record again.
  const facadeRecordStates = await inBatches(
    db,
    (limit) => sql`delete from facade_record_states s using (
      select user_id, environment, record_group, reference from facade_record_states
      where updated_at < ${eventsBefore}
      limit ${limit}
    ) old
    where s.user_id = old.user_id and s.environment = old.environment and s.record_group = old.record_group
      and s.reference = old.reference and s.updated_at < ${eventsBefore}
    returning 1`,
    n,
  );
  return { jobs, webhookAttempts, webhookDeliveries, events, idempotencyKeys, facadeKeys, facadeRecordStates };
}

/** Each operation kind's table and the statuses it never leaves (no move out of them). */
export const FINISHED = LIFECYCLES.map((lifecycle) => ({
  kind: lifecycle.kind,
  table: getTableName(lifecycle.table),
  finals: Object.entries(lifecycle.moves as Record<string, Record<string, unknown>>)
    .filter(([, to]) => Object.keys(to).length === 0)
    .map(([status]) => status),
}));

/**
 * One batch of a kind's finished history: its transitions older than the window (found by
 * operation_transitions_kind_at_idx) whose operation finished before the window. Every transition
 * of an operation happened no later than its last change (each move sets both to the same time),
 * so `t.at` only narrows the search; the operation's own status and age decide. Scanning by the
 * operation instead read every operation of the kind ever finished, once per batch.
 */
export function historyBatch({ kind, table, finals }: (typeof FINISHED)[number], before: SQL, limit: number): SQL {
  const finished = sql.join(
    finals.map((status) => sql`${status}`),
    sql`, `,
  );
  return sql`delete from operation_transitions where id in (
    select t.id from operation_transitions t join ${sql.identifier(table)} o on o.id = t.operation_id
    where t.kind = ${kind} and t.at < ${before}
      and o.status::text in (${finished}) and o.updated_at < ${before}
    limit ${limit}
  ) returning 1`;
}

/**
 * One pass over the histories that grow with traffic: the state transitions of operations that
 * finished (reached a status they never leave) before the window, all of an operation's at once
 * so no history is left half there; and the sandbox chains' executed signatures older than the
 * window, except those of a chain send still pending (its confirmation asks the chain for them).
 */
export async function pruneHistory(db: Executor, now: Date, policy: RetentionPolicy): Promise<PrunedHistory> {
  const before = (days: number) => sql`${new Date(now.getTime() - days * DAY_MS).toISOString()}::timestamptz`;
  const historyBefore = before(Math.max(30, policy.historyDays ?? 90));
  const signaturesBefore = before(Math.max(1, policy.sandboxSignaturesDays ?? 7));
  const n = policy.batchSize;

  let operationTransitions = 0;
  for (const finished of FINISHED) {
    if (finished.finals.length === 0) continue;
    operationTransitions += await inBatches(db, (limit) => historyBatch(finished, historyBefore, limit), n);
  }
  const sandboxSignatures = await inBatches(
    db,
    (limit) => sql`delete from solana_sandbox_signatures s using (
      select network, signature from solana_sandbox_signatures old
      where old.created_at < ${signaturesBefore}
        and not exists (select 1 from chain_sends p
          where p.family = 'solana' and p.tx_hash = old.signature and p.status = 'pending')
      limit ${limit}
    ) old
    where s.network = old.network and s.signature = old.signature
    returning 1`,
    n,
  );
  return { operationTransitions, sandboxSignatures };
}
