import { and, asc, count, desc, eq, gte, inArray, lt, lte, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { keysetPage, type Window } from '../../domain/keyset.js';
import { containsAnyCase } from '../../domain/list-search.js';
import { countedTotal } from '../../domain/list-totals.js';
import { nearEndSlice, pageWithTotal } from '../../domain/offset-page.js';
import { walletTransactions } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';

export type WalletTransactionRow = typeof walletTransactions.$inferSelect;
export type TransactionType = WalletTransactionRow['type'];
export type TransactionStatus = WalletTransactionRow['status'];

type Owner = { userId: string; environment: Environment };

export interface TransactionFilter {
  type?: TransactionType | undefined;
  status?: TransactionStatus | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  minAmount?: bigint | undefined;
  maxAmount?: bigint | undefined;
  /** Part of the reference, any case. */
  search?: string | undefined;
}

const ownedBy = (owner: Owner) =>
  and(eq(walletTransactions.userId, owner.userId), eq(walletTransactions.environment, owner.environment));

/** The owner's transactions that pass the filter: the one condition both list shapes share. */
function filtered(owner: Owner, filter: TransactionFilter) {
  const conditions: Array<SQL | undefined> = [
    ownedBy(owner),
    filter.type ? eq(walletTransactions.type, filter.type) : undefined,
    filter.status ? eq(walletTransactions.status, filter.status) : undefined,
    filter.from ? gte(walletTransactions.createdAt, filter.from) : undefined,
    filter.to ? lt(walletTransactions.createdAt, filter.to) : undefined,
    filter.minAmount !== undefined ? gte(walletTransactions.amount, filter.minAmount) : undefined,
    filter.maxAmount !== undefined ? lte(walletTransactions.amount, filter.maxAmount) : undefined,
    filter.search ? containsAnyCase(walletTransactions.reference, filter.search) : undefined,
  ];
  return and(...conditions);
}

/** Whether the filter has nothing but type and status, whose totals the database keeps counted. */
const onlyTypeAndStatus = (f: TransactionFilter) =>
  !f.from && !f.to && f.minAmount === undefined && f.maxAmount === undefined && !f.search;

export const transactionStore = {
  async insert(tx: Executor, row: typeof walletTransactions.$inferInsert): Promise<WalletTransactionRow> {
    const [inserted] = await tx.insert(walletTransactions).values(row).returning();
    return inserted!;
  },

  /** Moves a PENDING transaction to its outcome; returns undefined if it was no longer pending. */
  async settle(
    tx: Executor,
    id: string,
    status: 'COMPLETED' | 'FAILED',
    at: Date,
  ): Promise<WalletTransactionRow | undefined> {
    const [row] = await tx
      .update(walletTransactions)
      .set({ status, updatedAt: at, version: sql`${walletTransactions.version} + 1` })
      .where(and(eq(walletTransactions.id, id), eq(walletTransactions.status, 'PENDING')))
      .returning();
    return row;
  },

  /** Records a change of a PENDING transaction that settles nothing (a new version); undefined if not pending. */
  async touch(tx: Executor, id: string, at: Date): Promise<WalletTransactionRow | undefined> {
    const [row] = await tx
      .update(walletTransactions)
      .set({ updatedAt: at, version: sql`${walletTransactions.version} + 1` })
      .where(and(eq(walletTransactions.id, id), eq(walletTransactions.status, 'PENDING')))
      .returning();
    return row;
  },

  async findById(db: Executor, owner: Owner, id: string): Promise<WalletTransactionRow | undefined> {
    const [row] = await db
      .select()
      .from(walletTransactions)
      .where(and(ownedBy(owner), eq(walletTransactions.id, id)));
    return row;
  },

  async findByReference(db: Executor, owner: Owner, reference: string): Promise<WalletTransactionRow | undefined> {
    const [row] = await db
      .select()
      .from(walletTransactions)
      .where(and(ownedBy(owner), eq(walletTransactions.reference, reference)));
    return row;
  },

  /**
   * An OFFSET page with its exact total, cheap at any depth (see offset-page.ts); a search's page
   * and total in one pass over the owner's index entries (pageWithTotal).
   */
  async page(db: Executor, owner: Owner, filter: TransactionFilter, page: number, limit: number) {
    const where = filtered(owner, filter);
    const { ids, total } = filter.search
      ? await pageWithTotal(
          db
            .select({ id: walletTransactions.id, total: sql<number>`count(*) over ()` })
            .from(walletTransactions)
            .where(where)
            .orderBy(desc(walletTransactions.createdAt), desc(walletTransactions.id))
            .limit(limit)
            .offset((page - 1) * limit),
          page,
          () => transactionStore.count(db, owner, filter),
        )
      : nearEndIds(await transactionStore.count(db, owner, filter));
    if (Array.isArray(ids) && ids.length === 0) return { rows: [], total };
    const rows = await db
      .select()
      .from(walletTransactions)
      .where(inArray(walletTransactions.id, ids))
      .orderBy(desc(walletTransactions.createdAt), desc(walletTransactions.id));
    return { rows, total };

    /** The page's ids from the near end of the list (a subquery of the rows' statement). */
    function nearEndIds(total: number) {
      const slice = nearEndSlice(total, page, limit);
      if (!slice) return { ids: [] as string[], total };
      const read = slice.reversed ? asc : desc;
      const ids = db
        .select({ id: walletTransactions.id })
        .from(walletTransactions)
        .where(where)
        .orderBy(read(walletTransactions.createdAt), read(walletTransactions.id))
        .limit(slice.limit)
        .offset(slice.offset);
      return { ids, total };
    }
  },

  /** A cursor window of the same list, newest first. */
  window(db: Executor, owner: Owner, filter: TransactionFilter, window: Window) {
    return keysetPage(db, walletTransactions, filtered(owner, filter), window);
  },

  /** The exact total: kept by the database for type and status alone, else counted from the filter's index. */
  async count(db: Executor, owner: Owner, filter: TransactionFilter): Promise<number> {
    if (onlyTypeAndStatus(filter)) return countedTotal(db, 'wallet_transactions', owner, filter);
    const [total] = await db.select({ n: count() }).from(walletTransactions).where(filtered(owner, filter));
    return Number(total?.n ?? 0);
  },
};
