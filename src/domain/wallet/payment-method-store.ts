import { and, asc, count, eq, isNull } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { runStatement, statement } from '../../db/plain-sql.js';
import { users } from '../../db/schema.js';
import { paymentMethods } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';

export type PaymentMethodRow = typeof paymentMethods.$inferSelect;
type Owner = { userId: string; environment: Environment };

const owned = (owner: Owner) =>
  and(
    eq(paymentMethods.userId, owner.userId),
    eq(paymentMethods.environment, owner.environment),
    isNull(paymentMethods.deletedAt),
  );

const COLUMNS = `id, user_id, environment, type, provider, provider_token, brand, last4, exp_month, exp_year,
  bank_code, bank_name, account_number, account_name, is_default, created_at, deleted_at`;

/**
 * One of the owner's methods by id: read on every card deposit, so written once as plain SQL (a
 * named prepared statement on PostgreSQL) instead of being built by the query builder per call.
 */
const FIND_OWNED = statement(
  'payment_method_find_owned',
  `select ${COLUMNS} from payment_methods
   where id = $1 and user_id = $2 and environment = $3 and deleted_at is null`,
);

interface PlainRow {
  id: string;
  user_id: string;
  environment: Environment;
  type: PaymentMethodRow['type'];
  provider: string;
  provider_token: string | null;
  brand: string | null;
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
  bank_code: string | null;
  bank_name: string | null;
  account_number: string | null;
  account_name: string | null;
  is_default: boolean;
  created_at: Date | string;
  deleted_at: Date | string | null;
}

const dateOf = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

const fromPlain = (r: PlainRow): PaymentMethodRow => ({
  id: r.id,
  userId: r.user_id,
  environment: r.environment,
  type: r.type,
  provider: r.provider,
  providerToken: r.provider_token,
  brand: r.brand,
  last4: r.last4,
  expMonth: r.exp_month,
  expYear: r.exp_year,
  bankCode: r.bank_code,
  bankName: r.bank_name,
  accountNumber: r.account_number,
  accountName: r.account_name,
  isDefault: r.is_default,
  createdAt: dateOf(r.created_at),
  deletedAt: r.deleted_at === null ? null : dateOf(r.deleted_at),
});

/**
 * The payment methods' SQL, one named statement per question. Only methods not deleted are the
 * owner's; changes to one owner's methods run under `lockOwner` (see the service).
 */
export const paymentMethodStore = {
  /**
   * Takes the owner's user row lock for the transaction: concurrent creates, deletes and default
   * changes of one owner's methods queue on it instead of racing for the single default.
   */
  async lockOwner(tx: Executor, owner: Owner): Promise<void> {
    await tx.select({ id: users.id }).from(users).where(eq(users.id, owner.userId)).for('update');
  },

  /** The owner's methods, oldest first. */
  listOwned(db: Executor, owner: Owner): Promise<PaymentMethodRow[]> {
    return db.select().from(paymentMethods).where(owned(owner)).orderBy(asc(paymentMethods.createdAt));
  },

  /** One of the owner's methods; `id` must be a uuid. */
  async findOwned(db: Database, owner: Owner, id: string): Promise<PaymentMethodRow | undefined> {
    const [row] = await runStatement<PlainRow>(db, FIND_OWNED, [id, owner.userId, owner.environment]);
    return row ? fromPlain(row) : undefined;
  },

  /** How many methods the owner has. */
  async countOwned(tx: Executor, owner: Owner): Promise<number> {
    const [row] = await tx.select({ n: count() }).from(paymentMethods).where(owned(owner));
    return Number(row?.n ?? 0);
  },

  /** The owner's oldest method, the next default when the default goes. */
  async oldestOwned(tx: Executor, owner: Owner): Promise<string | undefined> {
    const [row] = await tx
      .select({ id: paymentMethods.id })
      .from(paymentMethods)
      .where(owned(owner))
      .orderBy(asc(paymentMethods.createdAt))
      .limit(1);
    return row?.id;
  },

  async insert(tx: Executor, row: typeof paymentMethods.$inferInsert): Promise<PaymentMethodRow> {
    const [inserted] = await tx.insert(paymentMethods).values(row).returning();
    return inserted!;
  },

  /** The owner has no default any more (before another method becomes it). */
  async clearDefault(tx: Executor, owner: Owner): Promise<void> {
    await tx
      .update(paymentMethods)
      .set({ isDefault: false })
      .where(and(owned(owner), eq(paymentMethods.isDefault, true)));
  },

  async makeDefault(tx: Executor, id: string): Promise<PaymentMethodRow> {
    const [row] = await tx.update(paymentMethods).set({ isDefault: true }).where(eq(paymentMethods.id, id)).returning();
    return row!;
  },

  /** Deleted methods stay (audit, cooling-off) but are no one's any more. */
  async softDelete(tx: Executor, id: string, at: Date): Promise<PaymentMethodRow> {
    const [row] = await tx
      .update(paymentMethods)
      .set({ deletedAt: at, isDefault: false })
      .where(eq(paymentMethods.id, id))
      .returning();
    return row!;
  },
};
