import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { deposits, paymentMethods, virtualAccounts } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';

export type DepositRow = typeof deposits.$inferSelect;
export type VirtualAccountRow = typeof virtualAccounts.$inferSelect;
type Owner = { userId: string; environment: Environment };

/** The deposits' and virtual accounts' SQL, one named statement per question. Status changes go through lifecycle/transition. */
export const depositStore = {
  async insert(tx: Executor, row: typeof deposits.$inferInsert): Promise<DepositRow> {
    const [inserted] = await tx.insert(deposits).values(row).returning();
    return inserted!;
  },

  /** Inserts a deposit a provider notified; undefined when that notice was recorded already. */
  async insertNotified(tx: Executor, row: typeof deposits.$inferInsert): Promise<DepositRow | undefined> {
    const [inserted] = await tx.insert(deposits).values(row).onConflictDoNothing().returning();
    return inserted;
  },

  async findById(db: Executor, id: string): Promise<DepositRow | undefined> {
    const [row] = await db.select().from(deposits).where(eq(deposits.id, id));
    return row;
  },

  async findByReference(db: Executor, owner: Owner, reference: string): Promise<DepositRow | undefined> {
    const [row] = await db
      .select()
      .from(deposits)
      .where(
        and(
          eq(deposits.userId, owner.userId),
          eq(deposits.environment, owner.environment),
          eq(deposits.reference, reference),
        ),
      );
    return row;
  },

  async findByProviderRef(db: Executor, provider: string, providerRef: string): Promise<DepositRow | undefined> {
    const [row] = await db
      .select()
      .from(deposits)
      .where(and(eq(deposits.provider, provider), eq(deposits.providerRef, providerRef)));
    return row;
  },

  /**
   * The provider's token of the card a deposit was charged to, deleted since or not: finishing a
   * charge the provider may already have taken needs it, whatever the owner did with the card.
   */
  async cardTokenOf(db: Executor, paymentMethodId: string): Promise<string | undefined> {
    const [row] = await db
      .select({ token: paymentMethods.providerToken })
      .from(paymentMethods)
      .where(eq(paymentMethods.id, paymentMethodId));
    return row?.token ?? undefined;
  },

  async virtualAccountOf(db: Executor, owner: Owner): Promise<VirtualAccountRow | undefined> {
    const [row] = await db
      .select()
      .from(virtualAccounts)
      .where(and(eq(virtualAccounts.userId, owner.userId), eq(virtualAccounts.environment, owner.environment)));
    return row;
  },

  async virtualAccountByNumber(
    db: Executor,
    environment: Environment,
    accountNumber: string,
  ): Promise<VirtualAccountRow | undefined> {
    const [row] = await db
      .select()
      .from(virtualAccounts)
      .where(and(eq(virtualAccounts.environment, environment), eq(virtualAccounts.accountNumber, accountNumber)));
    return row;
  },

  /** Inserts the owner's permanent account; undefined when a concurrent request inserted it first. */
  async insertVirtualAccount(
    db: Executor,
    row: typeof virtualAccounts.$inferInsert,
  ): Promise<VirtualAccountRow | undefined> {
    const [inserted] = await db.insert(virtualAccounts).values(row).onConflictDoNothing().returning();
    return inserted;
  },
};
