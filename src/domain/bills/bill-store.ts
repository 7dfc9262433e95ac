import { and, asc, desc, eq, gte, ilike, inArray, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { billBeneficiaries, billRecords, billSchedules } from '../../db/bills-schema.js';
import type { Environment } from '../auth/permissions.js';
import { containingPattern, containsAnyCase } from '../list-search.js';
import { countedTotal } from '../list-totals.js';
import { nearEndSlice, pageWithTotal } from '../offset-page.js';
import type { BillRecordRow } from './bill-record.js';
import type { BillType } from './bills-provider.js';

type Owner = { userId: string; environment: Environment };
export type BillScheduleRow = typeof billSchedules.$inferSelect;

/** A records query, with amounts in kobo and dates already resolved to instants. */
export interface BillRecordQuery {
  type?: BillType | undefined;
  status?: 'PENDING' | 'SUCCESS' | 'FAILED' | undefined;
  billerName?: string | undefined;
  billerCode?: string | undefined;
  customer?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  search?: string | undefined;
  minAmount?: bigint | undefined;
  maxAmount?: bigint | undefined;
  sortBy?: 'createdAt' | 'amount' | 'updatedAt' | undefined;
  sortOrder?: 'ASC' | 'DESC' | undefined;
}

const recordsOf = (owner: Owner) =>
  and(eq(billRecords.userId, owner.userId), eq(billRecords.environment, owner.environment));
const schedulesOf = (owner: Owner) =>
  and(eq(billSchedules.userId, owner.userId), eq(billSchedules.environment, owner.environment));
const beneficiariesOf = (owner: Owner) =>
  and(eq(billBeneficiaries.userId, owner.userId), eq(billBeneficiaries.environment, owner.environment));

/** Beyond this many distinct biller names for one owner, a name filter tests every row instead. */
const MAX_BILLER_NAMES_STEPPED = 500;

/**
 * The owner's distinct biller names matching `pattern` (ILIKE), found by stepping through the
 * (owner, biller_name) index one name at a time; 'scan' when the owner has more names than is
 * worth stepping through, so the caller tests the pattern on every row instead.
 */
async function billerNamesLike(db: Executor, owner: Owner, pattern: string): Promise<string[] | 'scan'> {
  const mine = sql`user_id = ${owner.userId} and environment = ${owner.environment}`;
  // Rows past the step limit are kept whatever their name, to tell "too many names" apart.
  const rows = await queryRows<{ name: string; step: number }>(
    db,
    sql`/* billerNamesLike */ with recursive names(name, step) as (
      (select biller_name, 1 from bill_records where ${mine} order by biller_name limit 1)
      union all
      select (select biller_name from bill_records where ${mine} and biller_name > names.name
               order by biller_name limit 1), step + 1
        from names where names.name is not null and step <= ${MAX_BILLER_NAMES_STEPPED}
    )
    select name, step from names
     where name is not null and (name ilike ${pattern} or step > ${MAX_BILLER_NAMES_STEPPED})`,
  );
  if (rows.some((r) => Number(r.step) > MAX_BILLER_NAMES_STEPPED)) return 'scan';
  return rows.map((r) => r.name);
}

/** Whether the query filters by nothing but type and status, whose totals the database keeps counted. */
const onlyTypeAndStatus = (q: BillRecordQuery) =>
  !q.billerName &&
  !q.billerCode &&
  !q.customer &&
  !q.from &&
  !q.to &&
  !q.search &&
  q.minAmount === undefined &&
  q.maxAmount === undefined;

/** The bills' SQL, one named statement per question. Status changes go through lifecycle/transition. */
export const billStore = {
  async insert(tx: Executor, row: typeof billRecords.$inferInsert): Promise<BillRecordRow> {
    const [inserted] = await tx.insert(billRecords).values(row).returning();
    return inserted!;
  },

  async findById(db: Executor, id: string): Promise<BillRecordRow | undefined> {
    const [row] = await db.select().from(billRecords).where(eq(billRecords.id, id));
    return row;
  },

  /** The record, locked until the caller's transaction ends (a scheduled run holds once). */
  async lock(tx: Executor, id: string): Promise<BillRecordRow | undefined> {
    const [row] = await tx.select().from(billRecords).where(eq(billRecords.id, id)).for('update');
    return row;
  },

  /** A schedule's records still waiting for their run: PENDING, with no money held yet. */
  async unheldOfSchedule(db: Executor, owner: Owner, scheduleId: string): Promise<BillRecordRow[]> {
    return db
      .select()
      .from(billRecords)
      .where(
        and(
          recordsOf(owner),
          eq(billRecords.scheduleId, scheduleId),
          eq(billRecords.status, 'PENDING'),
          sql`${billRecords.holdId} is null`,
        ),
      );
  },

  async findByReference(db: Executor, owner: Owner, reference: string): Promise<BillRecordRow | undefined> {
    const [row] = await db
      .select()
      .from(billRecords)
      .where(and(recordsOf(owner), eq(billRecords.reference, reference)));
    return row;
  },

  /** By what the provider calls it: our record id (from `pgw-<id>`), or its own tx_ref. */
  async findByProviderReference(
    db: Executor,
    provider: string,
    ref: { id: string } | { txRef: string },
  ): Promise<BillRecordRow | undefined> {
    const [row] = await db
      .select()
      .from(billRecords)
      .where(
        and(
          eq(billRecords.provider, provider),
          'id' in ref ? eq(billRecords.id, ref.id) : eq(billRecords.txRef, ref.txRef),
        ),
      )
      .limit(1);
    return row;
  },

  /** Changes of a record that keep its status (the hold placed, the provider's latest word). */
  async update(tx: Executor, id: string, changes: Partial<typeof billRecords.$inferInsert>): Promise<BillRecordRow> {
    const [row] = await tx.update(billRecords).set(changes).where(eq(billRecords.id, id)).returning();
    return row!;
  },

  /**
   * One page of records and the exact total. The total is counted first (from the index), so a
   * page in the back half is read from the far end, and only the page's own rows are fetched from
   * the table (a deferred join): deep OFFSET pages stay cheap at 100,000 records. A search reads
   * its page and total in one pass over the owner's index entries (pageWithTotal).
   */
  async page(db: Executor, owner: Owner, query: BillRecordQuery, page: number, limit: number) {
    // A partial biller name matches among the owner's few distinct names first, so the list and its
    // total are ranges of the (owner, biller_name, …) index instead of a pattern test on every row.
    const billerNames = query.billerName
      ? await billerNamesLike(db, owner, containingPattern(query.billerName))
      : undefined;
    if (billerNames?.length === 0) return { rows: [] as BillRecordRow[], total: 0 };
    const conditions: Array<SQL | undefined> = [
      recordsOf(owner),
      query.type ? eq(billRecords.type, query.type) : undefined,
      query.status ? eq(billRecords.status, query.status) : undefined,
      billerNames === 'scan'
        ? ilike(billRecords.billerName, containingPattern(query.billerName ?? ''))
        : billerNames
          ? inArray(billRecords.billerName, billerNames)
          : undefined,
      query.billerCode ? eq(billRecords.billerCode, query.billerCode) : undefined,
      query.customer ? eq(billRecords.customer, query.customer) : undefined,
      query.from ? gte(billRecords.createdAt, query.from) : undefined,
      query.to ? lt(billRecords.createdAt, query.to) : undefined,
      query.search
        ? or(containsAnyCase(billRecords.reference, query.search), containsAnyCase(billRecords.txRef, query.search))
        : undefined,
      query.minAmount !== undefined ? gte(billRecords.amount, query.minAmount) : undefined,
      query.maxAmount !== undefined ? lte(billRecords.amount, query.maxAmount) : undefined,
    ];
    const where = and(...conditions);
    const column = { createdAt: billRecords.createdAt, amount: billRecords.amount, updatedAt: billRecords.updatedAt }[
      query.sortBy ?? 'createdAt'
    ];
    const ascending = query.sortOrder === 'ASC';
    const order = ascending ? asc : desc;
    const count = async () =>
      Number((await db.select({ n: sql<number>`count(*)::int` }).from(billRecords).where(where))[0]?.n ?? 0);
    const { ids, total } = query.search
      ? // A search tests each of the owner's entries: the page and its total in one pass.
        await pageWithTotal(
          db
            .select({ id: billRecords.id, total: sql<number>`count(*) over ()` })
            .from(billRecords)
            .where(where)
            .orderBy(order(column), order(billRecords.id))
            .limit(limit)
            .offset((page - 1) * limit),
          page,
          count,
        )
      : nearEndIds(onlyTypeAndStatus(query) ? await countedTotal(db, 'bill_records', owner, query) : await count());
    if (Array.isArray(ids) && ids.length === 0) return { rows: [] as BillRecordRow[], total };
    const rows = await db
      .select()
      .from(billRecords)
      .where(inArray(billRecords.id, ids))
      .orderBy(order(column), order(billRecords.id));
    return { rows, total };

    /** The page's ids from the near end of the list (a subquery of the rows' statement), `total` counted beforehand. */
    function nearEndIds(total: number) {
      const slice = nearEndSlice(total, page, limit);
      if (!slice) return { ids: [] as string[], total };
      const read = ascending !== slice.reversed ? asc : desc;
      const ids = db
        .select({ id: billRecords.id })
        .from(billRecords)
        .where(where)
        .orderBy(read(column), read(billRecords.id))
        .limit(slice.limit)
        .offset(slice.offset);
      return { ids, total };
    }
  },

  async insertSchedule(tx: Executor, row: typeof billSchedules.$inferInsert): Promise<BillScheduleRow> {
    const [inserted] = await tx.insert(billSchedules).values(row).returning();
    return inserted!;
  },

  async lockSchedule(tx: Executor, id: string): Promise<BillScheduleRow | undefined> {
    const [row] = await tx.select().from(billSchedules).where(eq(billSchedules.id, id)).for('update');
    return row;
  },

  async updateSchedule(tx: Executor, id: string, changes: Partial<typeof billSchedules.$inferInsert>): Promise<void> {
    await tx.update(billSchedules).set(changes).where(eq(billSchedules.id, id));
  },

  async schedules(db: Executor, owner: Owner): Promise<BillScheduleRow[]> {
    return db.select().from(billSchedules).where(schedulesOf(owner)).orderBy(desc(billSchedules.createdAt));
  },

  /** Cancels an active schedule of the owner; undefined when there is none to cancel. */
  async cancelSchedule(db: Executor, owner: Owner, id: string, at: Date): Promise<BillScheduleRow | undefined> {
    const [row] = await db
      .update(billSchedules)
      .set({ status: 'cancelled', nextRunAt: null, updatedAt: at })
      .where(and(eq(billSchedules.id, id), schedulesOf(owner), eq(billSchedules.status, 'active')))
      .returning();
    return row;
  },

  async beneficiaries(db: Executor, owner: Owner) {
    return db.select().from(billBeneficiaries).where(beneficiariesOf(owner)).orderBy(asc(billBeneficiaries.createdAt));
  },

  /** Saves a payee, or renames the one with the same biller and customer. */
  async saveBeneficiary(tx: Executor, row: typeof billBeneficiaries.$inferInsert): Promise<void> {
    await tx
      .insert(billBeneficiaries)
      .values(row)
      .onConflictDoUpdate({
        target: [
          billBeneficiaries.userId,
          billBeneficiaries.environment,
          billBeneficiaries.billerCode,
          billBeneficiaries.customer,
        ],
        set: { name: row.name },
      });
  },

  async deleteBeneficiary(db: Executor, owner: Owner, id: string) {
    const [row] = await db
      .delete(billBeneficiaries)
      .where(and(eq(billBeneficiaries.id, id), beneficiariesOf(owner)))
      .returning();
    return row;
  },
};
