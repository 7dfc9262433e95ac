import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { payouts } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';

export type PayoutRow = typeof payouts.$inferSelect;
type Owner = { userId: string; environment: Environment };

/** The payouts' SQL, one named statement per question. Status changes go through lifecycle/transition. */
export const payoutStore = {
  async insert(tx: Executor, row: typeof payouts.$inferInsert): Promise<PayoutRow> {
    const [inserted] = await tx.insert(payouts).values(row).returning();
    return inserted!;
  },

  async findById(db: Executor, id: string): Promise<PayoutRow | undefined> {
    const [row] = await db.select().from(payouts).where(eq(payouts.id, id));
    return row;
  },

  /** The payout, locked until the caller's transaction ends (settles take it before the hold). */
  async lock(tx: Executor, id: string): Promise<PayoutRow | undefined> {
    const [row] = await tx.select().from(payouts).where(eq(payouts.id, id)).for('update');
    return row;
  },

  async findByReference(db: Executor, owner: Owner, reference: string): Promise<PayoutRow | undefined> {
    const [row] = await db
      .select()
      .from(payouts)
      .where(
        and(
          eq(payouts.userId, owner.userId),
          eq(payouts.environment, owner.environment),
          eq(payouts.reference, reference),
        ),
      );
    return row;
  },
};
