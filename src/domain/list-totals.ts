import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { listCounts } from '../db/lists-schema.js';
import type { Environment } from './auth/permissions.js';

/** The lists whose totals triggers keep (migration 0021): the counted tables' names. */
export type CountedList = 'bill_records' | 'wallet_transactions';

/**
 * The exact number of the owner's rows in `list`, of `type` and/or `status` when given, from the
 * counts the database keeps in the same transaction as every insert, status change and delete:
 * a sum over at most a few dozen rows at any list size. Other filters are counted from their index.
 */
export async function countedTotal(
  db: Executor,
  list: CountedList,
  owner: { userId: string; environment: Environment },
  by: { type?: string | undefined; status?: string | undefined },
): Promise<number> {
  const [row] = await db
    .select({ n: sql<string>`coalesce(sum(${listCounts.n}), 0)` })
    .from(listCounts)
    .where(
      and(
        eq(listCounts.userId, owner.userId),
        eq(listCounts.environment, owner.environment),
        eq(listCounts.list, list),
        by.type ? eq(listCounts.type, by.type) : undefined,
        by.status ? eq(listCounts.status, by.status) : undefined,
      ),
    );
  return Number(row?.n ?? 0);
}
