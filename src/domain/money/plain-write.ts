import { getTableColumns } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Statement } from '../../db/plain-sql.js';
import { type Clock, clockParams } from '../clock.js';
import { laneOf } from '../jobs/lanes.js';
import type { KeyRow } from './key-claim.js';

/**
 * Pieces of the money operations' one-statement writes (plain SQL run through db/plain-sql.ts):
 * the key claim, the outbox, and turning the driver's raw rows into the rows Drizzle
 * would have returned. Each store composes them into its own statement text, built once.
 */

/**
 * The key claim as two CTEs, `claim` (a transaction-scoped advisory lock on the key's hash, not
 * waited for; true without a key) and `prior` (the key's row, read after the lock), as
 * money/key-claim.ts `claimKey` does, and `go` (a row when the key is free and `passes`, an SQL
 * condition the statement adds, holds). `p` names the parameters: lock id, owner, environment,
 * operation, key, now.
 */
export const claimCtes = (
  p: {
    lockId: string;
    userId: string;
    environment: string;
    operation: string;
    key: string;
    now: string;
  },
  passes?: string,
) => `claim as (
    select case when ${p.key}::text is null then true else pg_try_advisory_xact_lock(${p.lockId}::bigint) end as ok
  ),
  prior as (
    select k.status, k.request_hash, k.response, k.resource_id,
      (k.locked_until is null or k.locked_until < ${p.now}::timestamptz) as lease_over
    from idempotency_keys k, claim
    where claim.ok and k.user_id = ${p.userId}::uuid and k.environment = ${p.environment}::environment
      and k.operation = ${p.operation}::text and k.key = ${p.key}::text
  ),
  go as (select 1 as one where (select ok from claim) and not exists (select 1 from prior)${passes ? ` and ${passes}` : ''})`;

/** A key's row, as SQL expressions (placeholders or columns): whose it is and the request's fingerprint. */
export interface KeyColumns {
  userId: string;
  environment: string;
  operation: string;
  key: string;
  requestHash: string;
}

/**
 * The key's row `running` with its record attached across a provider call, until `leaseUntil`;
 * written only when the key is given and `when` (an SQL condition: the record was written) holds.
 * `takeOverAt` (now): a row left `running` whose lease is over is taken over (a dead request's
 * key resumed); without it the statement's claim saw no row, and a row found is a fault. Every
 * `running` key is written by this text, whichever statement carries it.
 */
export const runningKeyInsert = (
  p: KeyColumns & { resourceId: string; leaseUntil: string },
  when: string,
  takeOverAt?: string,
) => `insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, resource_id, locked_until)
    select ${p.userId}::uuid, ${p.environment}::environment, ${p.operation}::text, ${p.key}::text,
      ${p.requestHash}::text, 'running'::idempotency_status, ${p.resourceId}::text, ${p.leaseUntil}::timestamptz
    where ${p.key}::text is not null and ${when}${
      takeOverAt
        ? `
    on conflict (user_id, environment, operation, key) do update
      set resource_id = excluded.resource_id, locked_until = excluded.locked_until
      where idempotency_keys.status = 'running'
        and (idempotency_keys.locked_until is null or idempotency_keys.locked_until < ${takeOverAt}::timestamptz)`
        : ''
    }`;

/**
 * The key's row `done` with `response` as its answer, written only when the key is given and
 * `when` holds. `overRunning`: a `running` row (this operation's own first commit, or a twin's
 * meanwhile) becomes the answer; an answered key is never overwritten. Without it the claim saw
 * no row. Every answer is written by this text (or `answerCte`'s update of the row in place).
 */
export const doneKeyInsert = (p: KeyColumns & { response: string }, when: string, overRunning: boolean) =>
  `insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, response)
    select ${p.userId}::uuid, ${p.environment}::environment, ${p.operation}::text, ${p.key}::text, ${p.requestHash}::text,
      'done'::idempotency_status, ${p.response}::jsonb
    where ${p.key}::text is not null and ${when}${
      overRunning
        ? `
    on conflict (user_id, environment, operation, key) do update
      set status = 'done', response = excluded.response, locked_until = null
      where idempotency_keys.status = 'running'`
        : ''
    }`;

/**
 * The key's answer as two CTEs, written only when `when` (an SQL condition: the operation moved):
 * the key's row becomes `done` with the response, whether this statement or the one before the
 * provider call inserted it (then it is `running`; an answered key is never overwritten). The
 * `running` row the open statement left is updated in place (`key_done`: a plain update, HOT, no
 * row lock logged first as an upsert's is); only when there is none is the answer inserted
 * (`answer`), an upsert in case a twin wrote the row meanwhile. `p` names the parameters: owner,
 * environment, operation, key, request hash, response JSON.
 */
export const answerCte = (p: KeyColumns & { response: string }, when: string) => `key_done as (
    update idempotency_keys set status = 'done', response = ${p.response}::jsonb, locked_until = null
    where user_id = ${p.userId}::uuid and environment = ${p.environment}::environment
      and operation = ${p.operation}::text and key = ${p.key}::text and status = 'running' and ${when}
    returning 1
  ),
  answer as (
    ${doneKeyInsert(p, `${when} and not exists (select 1 from key_done)`, true)}
  )`;

/** The claim's columns for the statement's final select (prefixed, so they never clash with a record's). */
export const claimColumns = `(select ok from claim) as key_locked, p.status as key_status, p.request_hash as key_request_hash,
    p.response as key_response, p.resource_id as key_resource_id, p.lease_over as key_lease_over`;

export function keyRowOf(row: Record<string, unknown>): KeyRow {
  return {
    locked: row['key_locked'] as boolean,
    status: (row['key_status'] ?? null) as KeyRow['status'],
    request_hash: (row['key_request_hash'] ?? null) as string | null,
    response: (row['key_response'] ?? null) as KeyRow['response'],
    resource_id: (row['key_resource_id'] ?? null) as string | null,
    lease_over: (row['key_lease_over'] ?? null) as boolean | null,
  };
}

/**
 * The outbox of a statement: `source` selects (n, type, owner, data) rows, written as events in
 * the order of n (the relay stamps one transaction's events in insertion order), with the
 * request's trace context, as outbox.ts `recordEvent` writes them. Their webhook deliveries and
 * jobs are written later by the relay's fan-out (events/fan-out.ts), not on the request path.
 * `p` names the parameters: environment, time, trace JSON (`{}` in no trace).
 */
export const outboxCtes = (source: string, p: { environment: string; at: string; trace: string }) => `event as (
    insert into events (type, user_id, environment, data, created_at, trace_context)
    select e.type, e.owner, ${p.environment}::environment, e.data, ${p.at}::timestamptz, nullif(${p.trace}::jsonb, '{}'::jsonb)
    from (${source}) as e(n, type, owner, data)
    order by e.n
    returning id, user_id, type
  )`;

/**
 * A wallet transaction row (`t`) as its `transaction.*` event data, as wallet/transaction-lifecycle.ts
 * `transactionEventData` builds it (the amount a JSON number of naira, exact to the kobo).
 */
export const transactionEventData = (t: string, updatedAtIso: string, stage?: string) =>
  `jsonb_build_object('id', ${t}.id, 'reference', ${t}.reference, 'type', ${t}.type, 'status', ${t}.status,
    'amount', ${t}.amount::float8 / 100, 'currency', ${t}.currency, 'version', ${t}.version,
    'updatedAt', ${updatedAtIso}::text${stage ? `, 'stage', ${stage}::text` : ''})`;

/**
 * The id of an operation's wallet transaction, as SQL: the id the operation keeps (`link`, a scalar
 * subquery), else its owner's transaction of that reference, looked up only when there is no link
 * (rows written before the link existed) and `guard` holds. By id, the plan of the update using it
 * cannot depend on statistics: without any, PostgreSQL costs the owner's list indexes the same as
 * the unique (owner, reference) one, and may read all of the owner's transactions to find one.
 */
export const linkedTransactionId = (
  link: string,
  owner: { userId: string; environment: string; reference: string },
  guard: string,
) => `coalesce(
        ${link},
        (select w.id from wallet_transactions w
         where w.user_id = ${owner.userId}::uuid and w.environment = ${owner.environment}::environment
           and w.reference = ${owner.reference}::text and ${guard})
      )`;

/** A job's kind and lane as SQL values, as job-runner.ts `enqueueJob` writes them (the lane from the kind). */
/**
 * A job's wall-time due time in a one-statement write, from `runAt` read on an account's clock:
 * less the offset of its test clock (`clockId`, null for any other clock) as the clock's row
 * stands, read under a share lock so an advance's jump either waits for this write and shifts
 * its job or has committed (jobs/job-runner.ts, clockedRunAt). `offsetMs` is the caller's
 * reading, used only if the clock was deleted meanwhile.
 */
export const clockedRunAtSql = (runAt: string, clockId: string, offsetMs: string) =>
  `(${runAt}::timestamptz - coalesce((select offset_ms from test_clocks where id = ${clockId}::uuid for share), ${offsetMs}::bigint) * interval '1 millisecond')`;

/**
 * A job's `run_at, test_clock_id` values in a one-statement write. Clocked (an account on a test
 * clock): `clockedRunAtSql` and the clock's id. Otherwise `runAt` as it is and no clock, with no
 * lookup of test_clocks and no `clockId` or `offsetMs` parameter: production keys never have a
 * clock, so their writes pay nothing for one. A statement is written in both forms, each prepared
 * under its own name, and the caller runs the one its clock asks for.
 */
export const jobDueSql = (clocked: boolean, runAt: string, clockId: string, offsetMs: string) =>
  clocked ? `${clockedRunAtSql(runAt, clockId, offsetMs)}, ${clockId}::uuid` : `${runAt}::timestamptz, null::uuid`;

/** The form of a statement (jobDueSql) an account's clock asks for, and the clock's parameters it takes (none unclocked). */
export function statementForClock(
  forms: { plain: Statement; clocked: Statement },
  clock: Clock | undefined,
): { st: Statement; params: Array<string | number | null> } {
  const params = clockParams(clock);
  return params[0] === null ? { st: forms.plain, params: [] } : { st: forms.clocked, params };
}

export const jobLane = (kind: string) => `'${kind}', '${laneOf(kind)}'`;

type Mapper<Row> = (raw: Record<string, unknown>) => Row;
const mappers = new WeakMap<object, Mapper<unknown>>();

/**
 * Turns a raw row of `table` (snake_case, the driver's values) into the row Drizzle's select
 * returns (its keys, its types: bigints, dates, parsed JSON), by the table's own column mappers.
 */
export function rowMapper<Row>(table: PgTable): Mapper<Row> {
  let mapper = mappers.get(table) as Mapper<Row> | undefined;
  if (mapper) return mapper;
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({
    key,
    name: column.name,
    from: (value: unknown) => column.mapFromDriverValue(value),
  }));
  mapper = (raw) => {
    const row: Record<string, unknown> = {};
    for (const { key, name, from } of columns) {
      const value = raw[name];
      row[key] = value === null || value === undefined ? null : from(value);
    }
    return row as Row;
  };
  mappers.set(table, mapper as Mapper<unknown>);
  return mapper;
}

/** The unique constraint a statement violated, on either driver; undefined for any other error. */
export function violatedConstraint(error: unknown): string | undefined {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: string }).code === '23505') return (e as { constraint?: string }).constraint ?? '';
  }
  return undefined;
}

export const KEY_CONSTRAINT = 'idempotency_keys_pk';
/** The unique index that holds one wallet transaction per owner and reference. */
export const REFERENCE_CONSTRAINT = 'wallet_transactions_owner_reference_key';
