import { createHash } from 'node:crypto';
import { type AnyColumn, getTableColumns, getTableName } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { type Statement, statement } from '../../db/plain-sql.js';
import { traceContextJson, withTraceContext } from '../../observability/job-observation.js';
import type { Environment } from '../auth/permissions.js';
import { type Clock, clockParams } from '../clock.js';
import { holdPlacementCtes } from '../ledger/ledger-sql.js';
import { type KeyRef, keyLockId } from './key-claim.js';
import { claimColumns, claimCtes, jobDueSql, jobLane, keyRowOf, outboxCtes, runningKeyInsert } from './plain-write.js';

/**
 * A keyed operation's first commit as ONE statement, generated from what the operation is: its
 * record's table, its wallet transaction's table, the job that finishes it if the request dies,
 * whether it is paid from a hold (a bill, a payout; a deposit is not), and (for an operation with
 * checks of its own, a payout's limits) a gate the open must pass and rows written with it.
 * Everything else is written once here from the shared pieces: the key's claim
 * (money/plain-write.ts), the hold's placement with its posting (ledger/ledger-sql.ts), the record
 * and the PENDING wallet transaction inserted from their rows as the caller built them (each column
 * by its own type: `jsonb_populate_record` of the table), the job, the key left `running` with the
 * record, and the events in the order given. Every write depends on the hold's debit (or, with no
 * hold, the claim), which depends on the claim and the gate: a busy key, a key with an answer, a
 * gate that refuses or too little money writes nothing. A reference another operation holds meets
 * its unique index: the statement fails, and the open refuses it by name (money/reference.ts).
 */

/** Names a statement's parameters: `$n` for each name, numbered in the order first asked for. */
export class StatementParams {
  private readonly names: string[] = [];

  /** The placeholder of `name`. */
  readonly of = (name: string): string => {
    let at = this.names.indexOf(name);
    if (at < 0) at = this.names.push(name) - 1;
    return `$${at + 1}`;
  };

  /** The values in placeholder order; a name not given is null. */
  values(given: Record<string, unknown>): unknown[] {
    return this.names.map((name) => given[name] ?? null);
  }
}

/** What an operation adds to its open: read before the claim, a condition over it, and rows written with the record. */
export interface HeldOpenGate {
  /** CTEs read first (they may read nothing the open writes). */
  ctes: string;
  /** An SQL condition over them the open needs besides the key's claim. */
  passes: string;
  /** Columns the final select adds, named for the caller. */
  columns: string;
  /** CTEs written with the record (each `where exists (select 1 from moved)`). */
  writes: string;
}

export interface HeldOpenShape {
  /** Names the statement (with a digest of its text). */
  kind: string;
  record: PgTable;
  transaction: PgTable;
  /** The job that finishes the operation when no request does. */
  job: string;
  /** False for an operation paid nothing up front (a deposit): the claim alone lets the open write. */
  hold?: false;
  gate?: (p: StatementParams['of']) => HeldOpenGate;
}

/** A shape's statement, in its two forms: a job due on wall time, or on an account's test clock. */
export interface HeldOpenStatement {
  plain: { st: Statement; params: StatementParams };
  clocked: { st: Statement; params: StatementParams };
}

/** A table's row inserted from one JSON parameter holding every column (`rowJson`), when `when` holds. */
const insertRow = (name: string, table: PgTable, param: string, when: string, returning: boolean) => {
  const columns = Object.values(getTableColumns(table) as Record<string, AnyColumn>).map((c) => c.name);
  const t = getTableName(table);
  return `${name} as (
    insert into ${t} (${columns.join(', ')})
    select ${columns.map((c) => `r.${c}`).join(', ')} from jsonb_populate_record(null::${t}, ${param}::jsonb) r
    where ${when}${returning ? '\n    returning *' : ''}
  )`;
};

function generate(shape: HeldOpenShape, clocked: boolean) {
  const params = new StatementParams();
  const p = params.of;
  const gate = shape.gate?.(p);
  const moved = 'exists (select 1 from moved)';
  const text = `with ${gate ? `${gate.ctes},\n  ` : ''}${claimCtes(
    {
      lockId: p('keyLock'),
      userId: p('userId'),
      environment: p('environment'),
      operation: p('operation'),
      key: p('key'),
      now: p('at'),
    },
    gate?.passes,
  )},
  ${
    shape.hold === false
      ? 'moved as (select 1 as one from go)'
      : holdPlacementCtes({
          holdId: p('holdId'),
          environment: p('environment'),
          userId: p('userId'),
          wallet: p('wallet'),
          holds: p('holds'),
          amount: p('held'),
          reference: p('reference'),
          posting: p('posting'),
          transactionId: p('transactionId'),
          expiresAt: 'null',
        })
  },
  ${insertRow('record', shape.record, p('record'), moved, true)},
  ${insertRow('txn', shape.transaction, p('transaction'), moved, false)},
  running_key as (
    ${runningKeyInsert(
      {
        userId: p('userId'),
        environment: p('environment'),
        operation: p('operation'),
        key: p('key'),
        requestHash: p('requestHash'),
        resourceId: p('recordId'),
        leaseUntil: p('leaseUntil'),
      },
      moved,
    )}
  ),
  job as (
    insert into jobs (kind, lane, tenant, payload, run_at, test_clock_id)
    select ${jobLane(shape.job)}, ${p('userId')}::text, ${p('jobPayload')}::jsonb,
      ${clocked ? jobDueSql(true, p('runAt'), p('clockId'), p('clockOffsetMs')) : jobDueSql(false, p('runAt'), '', '')}
    where ${p('runAt')}::timestamptz is not null and ${moved}
  ),${gate ? `\n  ${gate.writes},` : ''}
  ${outboxCtes(
    `select e.n, e.type, ${p('userId')}::uuid, e.data
     from jsonb_to_recordset(${p('events')}::jsonb) as e(n int, type text, data jsonb)
     where ${moved}`,
    { environment: p('environment'), at: p('at'), trace: p('trace') },
  )}
  select ${claimColumns}, (select count(*) from moved)::int as moved${gate ? `, ${gate.columns}` : ''}, r.*
  from (select 1) one left join prior p on true left join record r on true`;
  // Named by its text: a change to the shape is a new prepared statement.
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return { st: statement(`held_open_${shape.kind}_${clocked ? 'clocked_' : ''}${digest}`, text), params };
}

/** The open statement of a shape, generated once. */
export function heldOpenStatement(shape: HeldOpenShape): HeldOpenStatement {
  return { plain: generate(shape, false), clocked: generate(shape, true) };
}

/**
 * A row as `jsonb_populate_record` reads it: each column by its Drizzle column's own driver value
 * (bigints and dates as text), a JSON column as its value.
 */
export function rowJson(table: PgTable, row: Record<string, unknown>): string {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table) as Record<string, AnyColumn>)) {
    const value = row[key];
    if (value === null || value === undefined) out[column.name] = null;
    else if (column.dataType === 'json') out[column.name] = value;
    else {
      const driver = column.mapToDriverValue(value);
      out[column.name] =
        typeof driver === 'bigint' ? driver.toString() : driver instanceof Date ? driver.toISOString() : driver;
    }
  }
  return JSON.stringify(out);
}

/** One open's values (the rows as `rowJson` gives them). */
export interface HeldOpenWrite {
  owner: { userId: string; environment: Environment };
  reference: string;
  key: KeyRef | null;
  leaseUntil: Date;
  at: Date;
  /** amount + fee, from the owner's wallet to their holds account (the accounts' ids); none for a shape without a hold. */
  hold?: { id: string; amount: bigint; wallet: string; holds: string };
  record: { id: string; json: string };
  transaction: { id: string; json: string };
  /** No job when `runAt` is null (nothing needs finishing: a provider that tells the outcome itself). */
  job: { payload: Record<string, unknown>; runAt: Date | null; clock?: Clock | undefined };
  /** In the order written (the relay stamps one transaction's events in insertion order). */
  events: readonly { type: string; data: unknown }[];
  /** The gate's own parameters, by name. */
  gate?: Record<string, unknown>;
}

/** The statement form an open's clock asks for, and its values. */
export function heldOpenRun(open: HeldOpenStatement, w: HeldOpenWrite): { st: Statement; values: unknown[] } {
  const [clockId, clockOffsetMs] = clockParams(w.job.clock);
  const { st, params } = clockId === null ? open.plain : open.clocked;
  return {
    st,
    values: params.values({
      ...w.gate,
      keyLock: w.key ? keyLockId(w.key.scope, w.key.key) : null,
      userId: w.owner.userId,
      environment: w.owner.environment,
      operation: w.key?.scope.operation,
      key: w.key?.key,
      requestHash: w.key?.requestHash,
      at: w.at.toISOString(),
      holdId: w.hold?.id,
      wallet: w.hold?.wallet,
      holds: w.hold?.holds,
      held: w.hold?.amount.toString(),
      reference: w.reference,
      posting: crypto.randomUUID(),
      transactionId: w.transaction.id,
      record: w.record.json,
      transaction: w.transaction.json,
      recordId: w.record.id,
      leaseUntil: w.leaseUntil.toISOString(),
      jobPayload: JSON.stringify(withTraceContext(w.job.payload)),
      runAt: w.job.runAt?.toISOString(),
      clockId,
      clockOffsetMs,
      events: JSON.stringify(w.events.map((e, n) => ({ n, type: e.type, data: e.data }))),
      trace: traceContextJson(),
    }),
  };
}

/**
 * What the statement answered: the record it opened, else why it wrote nothing (the key busy or
 * answered, or too little money; a gate's refusal is the caller's to read from `raw`).
 */
export function heldOpened<Row>(raw: Record<string, unknown>, recordOf: (raw: Record<string, unknown>) => Row) {
  if ((raw['moved'] as number) > 0) return { opened: recordOf(raw) } as const;
  const claim = keyRowOf(raw);
  if (!claim.locked || claim.status !== null) return { claim } as const;
  return undefined;
}
