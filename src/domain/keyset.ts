import { and, asc, type Column, desc, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { badInput } from './errors.js';
import { isUuid } from './ids.js';
import type { Executor } from '../db/client.js';

/** The most items one page of a connection holds: the same ceiling as the page-shaped lists. */
export const MAX_CONNECTION_PAGE = 100;
const DEFAULT_PAGE = 20;

/** Relay's window arguments: `first`/`after` pages forward (newest first), `last`/`before` backward. */
export interface WindowArgs {
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}

/**
 * A position in a newest-first list: the row's creation time as PostgreSQL's exact text (JS dates
 * drop microseconds, which would skip or repeat rows) and its id, which breaks ties. A cursor
 * names a position, not an offset, so rows inserted meanwhile never shift a page.
 */
export interface Position {
  at: string;
  id: string;
}

export interface Window {
  direction: 'forward' | 'backward';
  size: number;
  from: Position | undefined;
}

const POSTGRES_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;
/** A uuid, or a uuid behind its source's name (the activity feed's keys). */
const CURSOR_ID = /^([a-z]+:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const encodeCursor = (position: Position) =>
  Buffer.from(JSON.stringify([position.at, position.id]), 'utf8').toString('base64url');

function decodeCursor(cursor: string, field: string): Position {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string' &&
      POSTGRES_TIMESTAMP.test(parsed[0]) &&
      CURSOR_ID.test(parsed[1])
    )
      return { at: parsed[0], id: parsed[1] };
  } catch {
    // Falls through to the same answer as any other malformed cursor.
  }
  throw badInput(field, `${field} is not a cursor this list gave out.`);
}

/** Checks the window arguments with the rules of the page-shaped lists (1 to 100 items). */
export function windowOf(args: WindowArgs): Window {
  const { first, after, last, before } = args;
  if (first != null && last != null) throw badInput('last', 'Pass first or last, not both.');
  if (after != null && before != null) throw badInput('before', 'Pass after or before, not both.');
  const backward = last != null || (before != null && first == null);
  const size = (backward ? last : first) ?? DEFAULT_PAGE;
  const field = backward ? 'last' : 'first';
  if (!Number.isInteger(size) || size < 1 || size > MAX_CONNECTION_PAGE)
    throw badInput(field, `${field} must be a whole number from 1 to ${MAX_CONNECTION_PAGE}.`);
  const cursor = backward ? before : after;
  return {
    direction: backward ? 'backward' : 'forward',
    size,
    from: cursor == null ? undefined : decodeCursor(cursor, backward ? 'before' : 'after'),
  };
}

export interface PageOf<T> {
  items: Array<{ row: T; position: Position }>;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/**
 * Orders a fetched window (size + 1 rows, the extra one only says whether more exist) newest
 * first. Going forward from a cursor there is something before it; going backward from one,
 * something after it.
 */
export function pageFrom<T>(window: Window, fetched: Array<{ row: T; position: Position }>): PageOf<T> {
  const more = fetched.length > window.size;
  const items = fetched.slice(0, window.size);
  if (window.direction === 'backward') items.reverse();
  return {
    items,
    hasNextPage: window.direction === 'forward' ? more : window.from !== undefined,
    hasPreviousPage: window.direction === 'forward' ? window.from !== undefined : more,
  };
}

type KeyedTable = PgTable & { id: Column; createdAt: Column };

/**
 * One window of a table's rows under `where`, newest first by (createdAt, id), read with a
 * keyset condition that the (owner, created_at) indexes serve.
 */
export async function keysetPage<T extends KeyedTable>(
  db: Executor,
  table: T,
  where: SQL | undefined,
  window: Window,
): Promise<PageOf<T['$inferSelect']>> {
  const forward = window.direction === 'forward';
  const at = sql`${table.createdAt}`;
  if (window.from && !isUuid(window.from.id))
    throw badInput(forward ? 'after' : 'before', 'This is not a cursor of this list.');
  const keyset = window.from
    ? forward
      ? sql`(${at}, ${table.id}) < (${window.from.at}::timestamptz, ${window.from.id}::uuid)`
      : sql`(${at}, ${table.id}) > (${window.from.at}::timestamptz, ${window.from.id}::uuid)`
    : undefined;
  const order = forward ? [desc(table.createdAt), desc(table.id)] : [asc(table.createdAt), asc(table.id)];
  const rows = (await (db as Executor)
    .select({ ...getTableColumns(table), keysetAt: sql<string>`${table.createdAt}::text` })
    .from(table as PgTable)
    .where(and(where, keyset))
    .orderBy(...order)
    .limit(window.size + 1)) as unknown as Array<T['$inferSelect'] & { keysetAt: string; id: string }>;
  return pageFrom(
    window,
    rows.map(({ keysetAt, ...row }) => ({ row: row as T['$inferSelect'], position: { at: keysetAt, id: row.id } })),
  );
}

/**
 * The same window of several parents' rows in one statement (rows ranked per `parent` value):
 * a list nested in a list (each business's customers) costs one query however many parents ask.
 */
export async function keysetPages<T extends KeyedTable>(
  db: Executor,
  table: T,
  parent: Column,
  parents: readonly string[],
  where: SQL | undefined,
  window: Window,
): Promise<Map<string, PageOf<T['$inferSelect']>>> {
  const forward = window.direction === 'forward';
  if (window.from && !isUuid(window.from.id))
    throw badInput(forward ? 'after' : 'before', 'This is not a cursor of this list.');
  const at = sql`${table.createdAt}`;
  const keyset = window.from
    ? forward
      ? sql`(${at}, ${table.id}) < (${window.from.at}::timestamptz, ${window.from.id}::uuid)`
      : sql`(${at}, ${table.id}) > (${window.from.at}::timestamptz, ${window.from.id}::uuid)`
    : undefined;
  const direction = sql.raw(forward ? 'desc' : 'asc');
  const ranked = (db as Executor)
    .select({
      ...getTableColumns(table),
      keysetAt: sql<string>`${table.createdAt}::text`.as('keyset_at'),
      keysetRank:
        sql<number>`row_number() over (partition by ${parent} order by ${table.createdAt} ${direction}, ${table.id} ${direction})`.as(
          'keyset_rank',
        ),
    })
    .from(table as PgTable)
    .where(and(inArray(parent, [...parents]), where, keyset))
    .as('ranked');
  const rows = (await (db as Executor)
    .select()
    // The subquery's own type is too deep for the generic table here; its columns are the table's.
    .from(ranked as unknown as PgTable)
    .where(sql`keyset_rank <= ${window.size + 1}`)) as unknown as Array<
    T['$inferSelect'] & { keysetAt: string; keysetRank: number; id: string }
  >;
  const parentKey = parent.name;
  const grouped = new Map<string, typeof rows>(parents.map((p) => [p, []]));
  const keyOf = Object.entries(getTableColumns(table)).find(([, column]) => column.name === parentKey)![0];
  for (const row of rows) grouped.get(String((row as Record<string, unknown>)[keyOf]))?.push(row);
  return new Map(
    [...grouped].map(([key, list]) => [
      key,
      pageFrom(
        window,
        list
          .sort((a, b) => Number(a.keysetRank) - Number(b.keysetRank))
          .map(({ keysetAt, keysetRank: _rank, ...row }) => ({
            row: row as T['$inferSelect'],
            position: { at: keysetAt, id: row.id },
          })),
      ),
    ]),
  );
}
