import { bigint, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { environmentEnum } from './schema.js';

/**
 * Exact per-owner row counts of the paginated lists, one row per (list, type, status): database
 * triggers (migration 0021) keep them in the same transaction as every insert, status change and
 * delete of `bill_records` and `wallet_transactions`, so a list's total, unfiltered or by type and/or
 * status, is a sum over a dozen rows instead of counting 100,000 index entries.
 */
export const listCounts = pgTable(
  'list_counts',
  {
    userId: uuid('user_id').notNull(),
    environment: environmentEnum('environment').notNull(),
    /** 'bill_records' or 'wallet_transactions': the counted table. */
    list: text('list').notNull(),
    type: text('type').notNull(),
    status: text('status').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.environment, t.list, t.type, t.status] })],
);
