import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { type PageOf, type Position, pageFrom, type Window } from '../../domain/keyset.js';
import type { Owner } from '../../domain/activity/owned-rows.js';
import { type ActivityKind, type ActivitySource, type ActivityStatus, parseActivityKey } from './activity.js';

export interface ActivityFilter {
  kinds?: readonly ActivityKind[] | undefined;
  status?: ActivityStatus | undefined;
  /** Created at or after. */
  from?: Date | undefined;
  /** Created before. */
  to?: Date | undefined;
}

/** Each source table, with SQL for its kind and its status in the feed's terms. */
const SOURCES: Record<
  ActivitySource,
  { table: SQL; only?: SQL; kind: SQL; status: SQL; kinds: readonly ActivityKind[] }
> = {
  wallet: {
    table: sql`wallet_transactions`,
    kind: sql`(case type when 'WITHDRAWAL' then 'PAYOUT' else type::text end)`,
    status: sql`status::text`,
    kinds: ['DEPOSIT', 'PAYOUT', 'BILL', 'TRANSFER_IN', 'TRANSFER_OUT'],
  },
  solana: {
    table: sql`chain_sends`,
    only: sql`family = 'solana'`,
    kind: sql`(case kind when 'swap' then 'SWAP' else 'CHAIN_TRANSFER' end)`,
    status: sql`(case status when 'pending' then 'PENDING' when 'confirmed' then 'COMPLETED' else 'FAILED' end)`,
    kinds: ['CHAIN_TRANSFER', 'SWAP'],
  },
  offramp: {
    table: sql`offramp_orders`,
    kind: sql`'OFFRAMP'`,
    status: sql`(case when status = 'completed' then 'COMPLETED' when status in ('failed', 'expired', 'refunded') then 'FAILED' else 'PENDING' end)`,
    kinds: ['OFFRAMP'],
  },
};

/**
 * One branch of the feed: the source's rows of the owner that pass the filter and lie beyond the
 * window's cursor, already ordered and cut to the window, so each branch reads only its index.
 */
function branch(
  source: ActivitySource,
  owner: Owner,
  filter: ActivityFilter,
  window: Window | undefined,
): SQL | undefined {
  const { table, only, kind, status, kinds } = SOURCES[source];
  const wantedKinds = filter.kinds ? kinds.filter((k) => filter.kinds!.includes(k)) : kinds;
  if (wantedKinds.length === 0) return undefined;
  const key = sql`(${`${source}:`} || id::text) collate "C"`;
  const conditions: SQL[] = [sql`user_id = ${owner.userId}`, sql`environment = ${owner.environment}`];
  if (only) conditions.push(only);
  if (wantedKinds.length < kinds.length)
    conditions.push(
      sql`${kind} in (${sql.join(
        wantedKinds.map((k) => sql`${k}`),
        sql`, `,
      )})`,
    );
  if (filter.status) conditions.push(sql`${status} = ${filter.status}`);
  if (filter.from) conditions.push(sql`created_at >= ${filter.from.toISOString()}::timestamptz`);
  if (filter.to) conditions.push(sql`created_at < ${filter.to.toISOString()}::timestamptz`);
  const where = sql.join(conditions, sql` and `);
  if (!window) return sql`(select 1 from ${table} where ${where})`;
  const forward = window.direction === 'forward';
  if (window.from) {
    const at = sql`${window.from.at}::timestamptz`;
    const id = sql`${window.from.id} collate "C"`;
    conditions.push(
      forward
        ? sql`(created_at < ${at} or (created_at = ${at} and ${key} < ${id}))`
        : sql`(created_at > ${at} or (created_at = ${at} and ${key} > ${id}))`,
    );
  }
  const order = forward ? sql`created_at desc, ${key} desc` : sql`created_at asc, ${key} asc`;
  return sql`(select ${key} as key, created_at, created_at::text as at from ${table}
    where ${sql.join(conditions, sql` and `)} order by ${order} limit ${window.size + 1})`;
}

export const activityStore = {
  /** findActivityWindow: one window of the owner's feed, newest first, as keys for the loaders. */
  async window(
    db: Executor,
    owner: Owner,
    filter: ActivityFilter,
    window: Window,
  ): Promise<PageOf<{ source: ActivitySource; rowId: string }>> {
    const branches = (Object.keys(SOURCES) as ActivitySource[])
      .map((source) => branch(source, owner, filter, window))
      .filter((b): b is SQL => b !== undefined);
    if (branches.length === 0) return pageFrom(window, []);
    const order = window.direction === 'forward' ? sql`created_at desc, key desc` : sql`created_at asc, key asc`;
    const rows = await queryRows<{ key: string; at: string }>(
      db,
      sql`/* findActivityWindow */ select key, at from (${sql.join(branches, sql` union all `)}) feed
        order by ${order} limit ${window.size + 1}`,
    );
    return pageFrom(
      window,
      rows.map((r) => ({ row: parseActivityKey(r.key)!, position: { at: r.at, id: r.key } satisfies Position })),
    );
  },

  /** countActivity: how many of the owner's movements pass the filter. */
  async count(db: Executor, owner: Owner, filter: ActivityFilter): Promise<number> {
    const counts = (Object.keys(SOURCES) as ActivitySource[])
      .map((source) => branch(source, owner, filter, undefined))
      .filter((b): b is SQL => b !== undefined);
    if (counts.length === 0) return 0;
    const [row] = await queryRows<{ n: string | number }>(
      db,
      sql`/* countActivity */ select count(*) as n from (${sql.join(counts, sql` union all `)}) feed`,
    );
    return Number(row?.n ?? 0);
  },
};
