import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { businessCustomers } from '../../db/customers-schema.js';
import { runStatement, statement } from '../../db/plain-sql.js';
import { businesses } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import { keysetPage, keysetPages, type Window } from '../keyset.js';

export type BusinessCustomerRow = typeof businessCustomers.$inferSelect;
export type CustomerStatus = 'active' | 'disabled';
/** A business's customers in one environment (a business has customers in each). */
type Book = { businessId: string; environment: Environment };

const inBook = (book: Book, status?: CustomerStatus) =>
  and(
    eq(businessCustomers.businessId, book.businessId),
    eq(businessCustomers.environment, book.environment),
    status ? eq(businessCustomers.status, status) : undefined,
  );

/** Who owns a business: asked before every customer operation, so written once as plain SQL. */
const BUSINESS_OWNER = statement('business_owner', 'select owner_user_id from businesses where id = $1');

/** The business customers' SQL, one named statement per question. */
export const customerStore = {
  /** The business's owner; undefined when there is no such business. `businessId` must be a uuid. */
  async ownerOfBusiness(db: Database, businessId: string): Promise<string | undefined> {
    const [row] = await runStatement<{ owner_user_id: string }>(db, BUSINESS_OWNER, [businessId]);
    return row?.owner_user_id;
  },

  async insert(tx: Executor, row: typeof businessCustomers.$inferInsert): Promise<BusinessCustomerRow> {
    const [inserted] = await tx.insert(businessCustomers).values(row).returning();
    return inserted!;
  },

  /** One customer of the book; `id` must be a uuid. */
  async findInBook(db: Executor, book: Book, id: string): Promise<BusinessCustomerRow | undefined> {
    const [row] = await db
      .select()
      .from(businessCustomers)
      .where(and(eq(businessCustomers.id, id), inBook(book)));
    return row;
  },

  /** Customers among `ids` (uuids) of businesses `ownerUserId` owns, in one environment. */
  byIdsOfOwner(
    db: Executor,
    ownerUserId: string,
    environment: Environment,
    ids: string[],
  ): Promise<BusinessCustomerRow[]> {
    return db
      .select({ customer: businessCustomers })
      .from(businessCustomers)
      .innerJoin(businesses, eq(businesses.id, businessCustomers.businessId))
      .where(
        and(
          inArray(businessCustomers.id, ids),
          eq(businessCustomers.environment, environment),
          eq(businesses.ownerUserId, ownerUserId),
        ),
      )
      .then((rows) => rows.map((r) => r.customer));
  },

  /** One numbered page of the book, newest first, with the total. */
  async page(
    db: Executor,
    book: Book,
    status: CustomerStatus | undefined,
    page: number,
    limit: number,
  ): Promise<{ rows: BusinessCustomerRow[]; total: number }> {
    const where = inBook(book, status);
    const rows = await db
      .select()
      .from(businessCustomers)
      .where(where)
      .orderBy(desc(businessCustomers.createdAt), desc(businessCustomers.id))
      .limit(limit)
      .offset((page - 1) * limit);
    const [total] = await db.select({ n: count() }).from(businessCustomers).where(where);
    return { rows, total: Number(total?.n ?? 0) };
  },

  async count(db: Executor, book: Book, status?: CustomerStatus): Promise<number> {
    const [total] = await db.select({ n: count() }).from(businessCustomers).where(inBook(book, status));
    return Number(total?.n ?? 0);
  },

  /** A keyset window of the book, newest first. */
  window(db: Database, book: Book, window: Window, status?: CustomerStatus) {
    return keysetPage(db, businessCustomers, inBook(book, status), window);
  },

  /** The same window of several businesses' books (uuids), in one query. */
  windows(db: Database, businessIds: string[], environment: Environment, window: Window, status?: CustomerStatus) {
    return keysetPages(
      db,
      businessCustomers,
      businessCustomers.businessId,
      businessIds,
      and(eq(businessCustomers.environment, environment), status ? eq(businessCustomers.status, status) : undefined),
      window,
    );
  },

  /** Sets the given columns (and `updatedAt`) of one customer. */
  async update(
    tx: Executor,
    id: string,
    changes: Partial<Pick<BusinessCustomerRow, 'name' | 'phone' | 'email' | 'externalRef' | 'status'>>,
    at: Date,
  ): Promise<BusinessCustomerRow> {
    const [row] = await tx
      .update(businessCustomers)
      .set({ ...changes, updatedAt: at })
      .where(eq(businessCustomers.id, id))
      .returning();
    return row!;
  },
};
