import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { billStatusEnum, billTypeEnum } from '../../src/db/bills-schema.js';
import { type Executor, queryRows } from '../../src/db/client.js';
import { transactionStatusEnum, transactionTypeEnum } from '../../src/db/wallet-schema.js';
import type { Environment } from '../../src/domain/auth/permissions.js';
import { type CountedList, countedTotal } from '../../src/domain/list-totals.js';

const SHAPES: Record<CountedList, { types: readonly string[]; statuses: readonly string[] }> = {
  bill_records: { types: billTypeEnum.enumValues, statuses: billStatusEnum.enumValues },
  wallet_transactions: { types: transactionTypeEnum.enumValues, statuses: transactionStatusEnum.enumValues },
};

/**
 * The kept totals of every list of `owner`, unfiltered and by every type, status and pair, against
 * `count(*)` of the rows themselves: one comparison of two tables, so a failure names what differs.
 */
export async function expectExactTotals(db: Executor, userId: string, environment: Environment = 'sandbox') {
  const owner = { userId, environment };
  const kept: Record<string, number> = {};
  const counted: Record<string, number> = {};
  for (const list of Object.keys(SHAPES) as CountedList[]) {
    const { types, statuses } = SHAPES[list];
    for (const type of [undefined, ...types])
      for (const status of [undefined, ...statuses]) {
        const name = `${list} ${type ?? '*'} ${status ?? '*'}`;
        kept[name] = await countedTotal(db, list, owner, { type, status });
        const [row] = await queryRows<{ n: number }>(
          db,
          sql`select count(*)::int as n from ${sql.raw(list)} where user_id = ${userId} and environment = ${environment}
            ${type ? sql`and type::text = ${type}` : sql``} ${status ? sql`and status::text = ${status}` : sql``}`,
        );
        counted[name] = Number(row!.n);
      }
  }
  expect(kept).toEqual(counted);
  return counted;
}
