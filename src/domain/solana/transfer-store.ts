import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { solanaTransfers } from '../../db/solana-schema.js';
import type { Principal } from '../auth/principal.js';

export type SolanaTransferRow = typeof solanaTransfers.$inferSelect;

/** SQL for outgoing Solana transactions; every query named by its function. */
export const transferStore = {
  async insertTransfer(db: Executor, row: typeof solanaTransfers.$inferInsert): Promise<SolanaTransferRow> {
    const [inserted] = await db.insert(solanaTransfers).values(row).returning();
    return inserted!;
  },

  async findTransfer(db: Executor, id: string): Promise<SolanaTransferRow | undefined> {
    const [row] = await db.select().from(solanaTransfers).where(eq(solanaTransfers.id, id));
    return row;
  },

  async findOwnedBySignature(
    db: Executor,
    principal: Principal,
    signature: string,
  ): Promise<SolanaTransferRow | undefined> {
    const [row] = await db
      .select()
      .from(solanaTransfers)
      .where(
        and(
          eq(solanaTransfers.userId, principal.userId),
          eq(solanaTransfers.environment, principal.environment),
          eq(solanaTransfers.signature, signature),
        ),
      );
    return row;
  },

  async listOwned(db: Executor, principal: Principal, limit: number): Promise<SolanaTransferRow[]> {
    return db
      .select()
      .from(solanaTransfers)
      .where(and(eq(solanaTransfers.userId, principal.userId), eq(solanaTransfers.environment, principal.environment)))
      .orderBy(desc(solanaTransfers.createdAt))
      .limit(limit);
  },

  /** What pending transactions of a wallet hold, per mint ('' for SOL, fees of every kind included), raw units. */
  async pendingHolds(db: Executor, fromAddress: string, network: string): Promise<Map<string, bigint>> {
    const rows = await db
      .select({
        mint: solanaTransfers.mint,
        amount: sql<string>`sum(${solanaTransfers.amountRaw})`,
        fees: sql<string>`sum(${solanaTransfers.feeLamports})`,
      })
      .from(solanaTransfers)
      .where(
        and(
          eq(solanaTransfers.fromAddress, fromAddress),
          eq(solanaTransfers.network, network),
          inArray(solanaTransfers.status, ['pending']),
        ),
      )
      .groupBy(solanaTransfers.mint);
    const holds = new Map<string, bigint>();
    const add = (key: string, raw: bigint) => holds.set(key, (holds.get(key) ?? 0n) + raw);
    for (const row of rows) {
      add(row.mint ?? '', BigInt(row.amount));
      add('', BigInt(row.fees));
    }
    return holds;
  },

  /** Confirms the pending transaction with this signature, if there is one (the sandbox chain executed it). */
  async confirmBySignature(db: Executor, signature: string, at: Date): Promise<SolanaTransferRow | undefined> {
    const [row] = await db
      .update(solanaTransfers)
      .set({ status: 'confirmed', updatedAt: at })
      .where(and(eq(solanaTransfers.signature, signature), eq(solanaTransfers.status, 'pending')))
      .returning();
    return row;
  },

  /** Moves a pending transaction to its end state once; undefined when it already had one. */
  async settleTransfer(
    db: Executor,
    id: string,
    status: 'confirmed' | 'failed',
    error: string | null,
    at: Date,
  ): Promise<SolanaTransferRow | undefined> {
    const [row] = await db
      .update(solanaTransfers)
      .set({ status, error, updatedAt: at })
      .where(and(eq(solanaTransfers.id, id), eq(solanaTransfers.status, 'pending')))
      .returning();
    return row;
  },
};
