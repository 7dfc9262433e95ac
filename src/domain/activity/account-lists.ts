import { and, type Column, count, eq, inArray, type SQL } from 'drizzle-orm';
import { readsOf } from '../../db/pool-routing.js';
import type { PgTable } from 'drizzle-orm/pg-core';
import { billRecords } from '../../db/bills-schema.js';
import type { Database } from '../../db/client.js';
import { keysetPage, type PageOf, type Window } from '../../domain/keyset.js';
import { offrampOrders } from '../../db/offramp-schema.js';
import type { Owner } from '../../domain/activity/owned-rows.js';
import { chainSends } from '../../db/chain-schema.js';
import { deposits, payouts, virtualAccounts } from '../../db/wallet-schema.js';
import { badInput } from '../errors.js';
import { countedTotal } from '../list-totals.js';
import type { OfframpStatus } from '../offramp/catalogue.js';
import { type ActivityFilter, activityStore } from './activity-store.js';

/** A window of a list and, when asked for, the size of the whole list. */
export interface Listed<Row> {
  page: PageOf<Row>;
  countAll: () => Promise<number>;
}

const OPEN_OFFRAMP: OfframpStatus[] = ['initiated', 'deposit_received', 'processing', 'fiat_sent'];

type OwnedTable = PgTable & { id: Column; createdAt: Column; userId: Column; environment: Column };

/**
 * The growing lists of one account as cursor windows, newest first: the graph's connections.
 * The page-shaped lists of REST stay with their domains; these read the same tables.
 */
export class AccountLists {
  constructor(private readonly db: Database) {}

  async activity(
    owner: Owner,
    filter: ActivityFilter,
    window: Window,
  ): Promise<Listed<{ source: string; rowId: string }>> {
    if (filter.from && filter.to && filter.from >= filter.to) throw badInput('to', 'to must be after from.');
    return {
      page: await activityStore.window(readsOf(this.db), owner, filter, window),
      countAll: () => activityStore.count(readsOf(this.db), owner, filter),
    };
  }

  deposits(owner: Owner, status: (typeof deposits.$inferSelect)['status'] | undefined, window: Window) {
    return this.list(deposits, owner, status ? eq(deposits.status, status) : undefined, window);
  }

  payouts(owner: Owner, status: (typeof payouts.$inferSelect)['status'] | undefined, window: Window) {
    return this.list(payouts, owner, status ? eq(payouts.status, status) : undefined, window);
  }

  async billRecords(
    owner: Owner,
    filter: { type?: (typeof billRecords.$inferSelect)['type']; status?: (typeof billRecords.$inferSelect)['status'] },
    window: Window,
  ) {
    const listed = await this.list(
      billRecords,
      owner,
      and(
        filter.type ? eq(billRecords.type, filter.type) : undefined,
        filter.status ? eq(billRecords.status, filter.status) : undefined,
      ),
      window,
    );
    // Type and status totals are kept counted by the database (see list-totals.ts).
    return { ...listed, countAll: () => countedTotal(readsOf(this.db), 'bill_records', owner, filter) };
  }

  offrampOrders(owner: Owner, filter: { status?: OfframpStatus; open?: boolean }, window: Window) {
    const statuses =
      filter.open === undefined
        ? undefined
        : filter.open
          ? OPEN_OFFRAMP
          : (offrampOrders.status.enumValues.filter((s) => !OPEN_OFFRAMP.includes(s)) as OfframpStatus[]);
    return this.list(
      offrampOrders,
      owner,
      and(
        filter.status ? eq(offrampOrders.status, filter.status) : undefined,
        statuses ? inArray(offrampOrders.status, statuses) : undefined,
      ),
      window,
    );
  }

  /** The owner's permanent virtual account, if one was created (reading never creates it). */
  async virtualAccount(owner: Owner) {
    const [row] = await this.db
      .select()
      .from(virtualAccounts)
      .where(and(eq(virtualAccounts.userId, owner.userId), eq(virtualAccounts.environment, owner.environment)));
    return row;
  }

  solanaTransfers(owner: Owner, window: Window) {
    return this.list(chainSends, owner, eq(chainSends.family, 'solana'), window);
  }

  private async list<T extends OwnedTable>(
    table: T,
    owner: Owner,
    condition: SQL | undefined,
    window: Window,
  ): Promise<Listed<T['$inferSelect']>> {
    const where = and(eq(table.userId, owner.userId), eq(table.environment, owner.environment), condition);
    return {
      page: await keysetPage(readsOf(this.db), table, where, window),
      countAll: async () => {
        const [total] = await readsOf(this.db)
          .select({ n: count() })
          .from(table as PgTable)
          .where(where);
        return Number(total?.n ?? 0);
      },
    };
  }
}
