import { and, count, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { offrampOrders } from '../../db/offramp-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { OfframpStatus } from './catalogue.js';
import type { OfframpOrderRow } from './offramp-order.js';

type Owner = { userId: string; environment: Environment };

export interface OfframpOrderFilter {
  status?: OfframpStatus | undefined;
  token?: string | undefined;
  network?: string | undefined;
  fiat?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

const ownedBy = (owner: Owner) =>
  and(eq(offrampOrders.userId, owner.userId), eq(offrampOrders.environment, owner.environment));

export const offrampStore = {
  async insert(db: Executor, row: typeof offrampOrders.$inferInsert): Promise<OfframpOrderRow> {
    const [inserted] = await db.insert(offrampOrders).values(row).returning();
    return inserted!;
  },

  async findById(db: Executor, id: string): Promise<OfframpOrderRow | undefined> {
    const [row] = await db.select().from(offrampOrders).where(eq(offrampOrders.id, id));
    return row;
  },

  async findByReference(db: Executor, owner: Owner, reference: string): Promise<OfframpOrderRow | undefined> {
    const [row] = await db
      .select()
      .from(offrampOrders)
      .where(and(ownedBy(owner), eq(offrampOrders.reference, reference)));
    return row;
  },

  async findByIdempotencyKey(db: Executor, owner: Owner, key: string): Promise<OfframpOrderRow | undefined> {
    const [row] = await db
      .select()
      .from(offrampOrders)
      .where(and(ownedBy(owner), eq(offrampOrders.idempotencyKey, key)));
    return row;
  },

  async findByProviderOrder(
    db: Executor,
    provider: string,
    providerOrderId: string,
  ): Promise<OfframpOrderRow | undefined> {
    const [row] = await db
      .select()
      .from(offrampOrders)
      .where(and(eq(offrampOrders.provider, provider), eq(offrampOrders.providerOrderId, providerOrderId)));
    return row;
  },

  async page(
    db: Executor,
    owner: Owner,
    filter: OfframpOrderFilter,
    page: number,
    limit: number,
  ): Promise<{ rows: OfframpOrderRow[]; total: number }> {
    const conditions: Array<SQL | undefined> = [
      ownedBy(owner),
      filter.status ? eq(offrampOrders.status, filter.status) : undefined,
      filter.token ? eq(offrampOrders.token, filter.token) : undefined,
      filter.network ? eq(offrampOrders.network, filter.network) : undefined,
      filter.fiat ? eq(offrampOrders.fiat, filter.fiat) : undefined,
      filter.from ? gte(offrampOrders.createdAt, filter.from) : undefined,
      filter.to ? lt(offrampOrders.createdAt, filter.to) : undefined,
    ];
    const where = and(...conditions);
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(offrampOrders)
        .where(where)
        .orderBy(desc(offrampOrders.createdAt), desc(offrampOrders.id))
        .limit(limit)
        .offset((page - 1) * limit),
      db.select({ n: count() }).from(offrampOrders).where(where),
    ]);
    return { rows, total: Number(total?.n ?? 0) };
  },
};
