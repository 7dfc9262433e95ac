import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, kobo, updatedAt } from './columns.js';
import { ownerColumns } from './schema.js';
import { ledgerHolds } from './ledger-schema.js';

export const billTypeEnum = pgEnum('bill_type', ['AIRTIME', 'MOBILEDATA', 'CABLEBILLS', 'UTILITYBILLS']);
export const billStatusEnum = pgEnum('bill_status', ['PENDING', 'SUCCESS', 'FAILED']);

/** The seed's bill transaction record. `amount` is the face value; `fee` is charged on top. */
export const billRecords = pgTable(
  'bill_records',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    reference: text('reference').notNull(),
    billerCode: text('biller_code').notNull(),
    itemCode: text('item_code').notNull(),
    customer: text('customer').notNull(),
    amount: kobo('amount').notNull(),
    fee: kobo('fee').notNull().default(sql`0`),
    type: billTypeEnum('type').notNull(),
    status: billStatusEnum('status').notNull().default('PENDING'),
    providerData: jsonb('provider_data'),
    txRef: text('tx_ref'),
    billerName: text('biller_name').notNull(),
    customerName: text('customer_name'),
    validityPeriod: text('validity_period'),
    metadata: text('metadata'),
    token: text('token'),
    units: text('units'),
    holdId: uuid('hold_id').references(() => ledgerHolds.id),
    provider: text('provider').notNull(),
    scheduleId: uuid('schedule_id'),
    failureReason: text('failure_reason'),
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedDate: timestamp('deleted_date', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('bill_records_owner_reference_key').on(t.userId, t.environment, t.reference),
    // The list's indexes: one per filter and sort, each ending in the list's order (sort column, id),
    // so a page is a range of one index and its exact total an index-only count (see records()).
    // The default order's index, (owner, created_at, id) with the searched and filtered columns, is
    // written in SQL (migration 0043_list_search_covering_indexes): drizzle has no INCLUDE.
    index('bill_records_owner_updated_id_idx').on(t.userId, t.environment, t.updatedAt, t.id),
    index('bill_records_owner_amount_id_idx').on(t.userId, t.environment, t.amount, t.id),
    index('bill_records_owner_type_status_created_idx').on(
      t.userId,
      t.environment,
      t.type,
      t.status,
      t.createdAt,
      t.id,
    ),
    index('bill_records_owner_status_created_id_idx').on(t.userId, t.environment, t.status, t.createdAt, t.id),
    index('bill_records_owner_biller_name_created_idx').on(t.userId, t.environment, t.billerName, t.createdAt, t.id),
    index('bill_records_owner_biller_code_created_idx').on(t.userId, t.environment, t.billerCode, t.createdAt, t.id),
    index('bill_records_owner_customer_created_idx').on(t.userId, t.environment, t.customer, t.createdAt, t.id),
    index('bill_records_pending_idx').on(t.status, t.updatedAt).where(sql`${t.status} = 'PENDING'`),
  ],
);

/** A saved recipient of bill payments. */
export const billBeneficiaries = pgTable(
  'bill_beneficiaries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    name: text('name').notNull(),
    type: billTypeEnum('type').notNull(),
    billerCode: text('biller_code').notNull(),
    billerName: text('biller_name').notNull(),
    customer: text('customer').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('bill_beneficiaries_owner_target_key').on(t.userId, t.environment, t.billerCode, t.customer)],
);

/** A scheduled run that was counted but not paid, and why. */
export interface SkippedBillRun {
  run: number;
  reference: string;
  reason: string;
  /** ISO 8601: when the run happened. */
  at: string;
}

/** How many skipped runs a schedule keeps (the latest), so the row stays small on any recurrence. */
export const SKIPPED_RUNS_KEPT = 20;

export const billScheduleStatusEnum = pgEnum('bill_schedule_status', ['active', 'cancelled', 'completed']);

/**
 * A bill payment to run later, once or on a recurrence (daily, weekly, monthly, in Africa/Lagos
 * time). It belongs to the user, not to the key that made it. Money is held when a run happens.
 */
export const billSchedules = pgTable(
  'bill_schedules',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    /** The payment to make at each run. */
    payment: jsonb('payment').notNull(),
    firstRunAt: timestamp('first_run_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** daily | weekly | monthly, or null for a one-off. */
    recurrence: text('recurrence'),
    nextRunAt: timestamp('next_run_at', { withTimezone: true, mode: 'date' }),
    runCount: integer('run_count').notNull().default(0),
    /**
     * Runs counted but not paid because another bill of the owner already held the run's reference
     * (the latest SKIPPED_RUNS_KEPT): without them such a run would leave no trace at all.
     */
    skippedRuns: jsonb('skipped_runs').$type<SkippedBillRun[]>().notNull().default(sql`'[]'::jsonb`),
    status: billScheduleStatusEnum('status').notNull().default('active'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('bill_schedules_owner_idx').on(t.userId, t.environment, t.createdAt)],
);
