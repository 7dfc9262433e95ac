import { inArray, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { toBigInt, toSafeNumber } from '../../db/columns.js';
import { ledgerAccounts } from '../../db/ledger-schema.js';
import type { Environment } from '../auth/permissions.js';
import { badInput } from '../errors.js';
import { isUuid } from '../ids.js';
import { holdsOf, keyOf, walletOf } from './ledger.js';

/**
 * Point-in-time balances and statements of a user's NGN wallet, read from the append-only entries
 * (never from the cached balance), so any past instant can be answered exactly.
 *
 * Instants have millisecond precision (what JSON and JS dates carry); the database stores
 * microseconds. An entry belongs to the millisecond it was posted in: "as of t" counts entries
 * with created_at < t + 1 ms, and a range [from, to) holds entries with from <= created_at < to.
 * Every entry of one posting shares its transaction's timestamp, so no instant splits a movement.
 */

export interface WalletBalancesAt {
  currency: 'NGN';
  /** Null: now, from the accounts' cached balances. */
  at: Date | null;
  /** Spendable: the wallet account. */
  available: bigint;
  /** Reserved by payouts and bill payments in flight: the holds account. */
  pending: bigint;
  /** The user's money on the books: available + pending. */
  posted: bigint;
}

export interface StatementLine {
  id: string;
  postedAt: Date;
  /** Kobo; positive credits the wallet, negative debits it. */
  amount: bigint;
  /** The wallet's balance after this entry, counted from the statement's opening balance. */
  balance: bigint;
  /** The ledger transaction (posting) this entry belongs to, and what it was. */
  postingId: string;
  kind: string;
  reference: string;
  description: string | null;
}

export interface Statement {
  currency: 'NGN';
  from: Date;
  to: Date;
  /** The wallet's balance just before `from`, and just before `to`. */
  openingBalance: bigint;
  closingBalance: bigint;
  totalCredits: bigint;
  totalDebits: bigint;
  /** Entries in the whole range (every page). */
  entryCount: number;
  lines: StatementLine[];
  /** Pass as `after` for the next page; null on the last page. */
  nextCursor: string | null;
}

export const MAX_STATEMENT_PAGE = 1000;

// The ledger's own key format, so a change there cannot leave statements reading other rows.
const walletKey = (environment: Environment, userId: string) => keyOf(walletOf(environment, userId));
const holdsKey = (environment: Environment, userId: string) => keyOf(holdsOf(environment, userId));
const justAfter = (at: Date) => new Date(at.getTime() + 1).toISOString();

async function accountIds(db: Executor, environment: Environment, userId: string) {
  const rows = await db
    .select({ id: ledgerAccounts.id, key: ledgerAccounts.key, balance: ledgerAccounts.balance })
    .from(ledgerAccounts)
    .where(inArray(ledgerAccounts.key, [walletKey(environment, userId), holdsKey(environment, userId)]));
  return {
    wallet: rows.find((r) => r.key === walletKey(environment, userId)),
    holds: rows.find((r) => r.key === holdsKey(environment, userId)),
  };
}

/** Σ of an account's entries posted before `before` (an ISO instant), in kobo. */
async function sumBefore(db: Executor, accountId: string | undefined, before: string): Promise<bigint> {
  if (!accountId) return 0n;
  const [row] = await queryRows<{ total: unknown }>(
    db,
    sql`/* ledgerSumBefore */ select coalesce(sum(amount), 0) as total from ledger_entries
      where account_id = ${accountId} and created_at < ${before}::timestamptz`,
  );
  return toBigInt(row?.total ?? 0);
}

export async function walletBalancesAt(
  db: Executor,
  environment: Environment,
  userId: string,
  at?: Date,
): Promise<WalletBalancesAt> {
  const { wallet, holds } = await accountIds(db, environment, userId);
  const [available, pending] = at
    ? await Promise.all([sumBefore(db, wallet?.id, justAfter(at)), sumBefore(db, holds?.id, justAfter(at))])
    : [wallet?.balance ?? 0n, holds?.balance ?? 0n];
  return { currency: 'NGN', at: at ?? null, available, pending, posted: available + pending };
}

export interface StatementQuery {
  from: Date;
  to: Date;
  limit: number;
  /** The last entry id of the previous page. */
  after?: string | undefined;
}

export async function walletStatement(
  db: Executor,
  environment: Environment,
  userId: string,
  query: StatementQuery,
): Promise<Statement> {
  if (!(query.from < query.to)) throw badInput('to', 'to must be after from.');
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_STATEMENT_PAGE)
    throw badInput('limit', `limit must be 1 to ${MAX_STATEMENT_PAGE}.`);
  const from = query.from.toISOString();
  const to = query.to.toISOString();
  const { wallet } = await accountIds(db, environment, userId);
  const empty = { currency: 'NGN' as const, from: query.from, to: query.to, lines: [], nextCursor: null };
  if (!wallet) {
    if (query.after) throw badCursor();
    return { ...empty, openingBalance: 0n, closingBalance: 0n, totalCredits: 0n, totalDebits: 0n, entryCount: 0 };
  }
  const [opening, totals] = await Promise.all([
    sumBefore(db, wallet.id, from),
    queryRows<{ credits: unknown; debits: unknown; count: unknown }>(
      db,
      sql`/* statementTotals */ select
          coalesce(sum(amount) filter (where amount > 0), 0) as credits,
          coalesce(sum(amount) filter (where amount < 0), 0) as debits,
          count(*) as count
        from ledger_entries
        where account_id = ${wallet.id} and created_at >= ${from}::timestamptz and created_at < ${to}::timestamptz`,
    ),
  ]);
  const credits = toBigInt(totals[0]?.credits ?? 0);
  const debits = toBigInt(totals[0]?.debits ?? 0);

  // The page starts after the cursor's entry, which must be an entry of this statement.
  let pageStart = opening;
  let position = sql`true`;
  if (query.after) {
    if (!isUuid(query.after)) throw badCursor();
    const [cursor] = await queryRows<{ created_at: unknown; through: unknown }>(
      db,
      sql`/* statementCursor */ select c.created_at, (
            select coalesce(sum(e.amount), 0) from ledger_entries e
            where e.account_id = c.account_id and e.created_at >= ${from}::timestamptz
              and (e.created_at, e.id) <= (c.created_at, c.id)
          ) as through
        from ledger_entries c
        where c.id = ${query.after} and c.account_id = ${wallet.id}
          and c.created_at >= ${from}::timestamptz and c.created_at < ${to}::timestamptz`,
    );
    if (!cursor) throw badCursor();
    pageStart = opening + toBigInt(cursor.through);
    position = sql`(e.created_at, e.id) > (select created_at, id from ledger_entries where id = ${query.after})`;
  }
  const rows = await queryRows<{
    id: string;
    created_at: string | Date;
    amount: unknown;
    posting_id: string;
    kind: string;
    reference: string;
    description: string | null;
  }>(
    db,
    sql`/* statementPage */ select e.id, e.created_at, e.amount, e.posting_id, p.kind, p.reference, p.description
      from ledger_entries e join ledger_postings p on p.id = e.posting_id
      where e.account_id = ${wallet.id} and e.created_at >= ${from}::timestamptz and e.created_at < ${to}::timestamptz
        and ${position}
      order by e.created_at, e.id
      limit ${query.limit + 1}`,
  );
  const page = rows.slice(0, query.limit);
  let running = pageStart;
  const lines = page.map((r) => {
    const amount = toBigInt(r.amount);
    running += amount;
    return {
      id: r.id,
      postedAt: new Date(r.created_at),
      amount,
      balance: running,
      postingId: r.posting_id,
      kind: r.kind,
      reference: r.reference,
      description: r.description,
    };
  });
  return {
    ...empty,
    openingBalance: opening,
    closingBalance: opening + credits + debits,
    totalCredits: credits,
    totalDebits: -debits,
    entryCount: toSafeNumber(totals[0]?.count ?? 0),
    lines,
    nextCursor: rows.length > query.limit ? page[page.length - 1]!.id : null,
  };
}

const badCursor = () => badInput('after', 'after must be the nextCursor of an earlier page of this statement.');
