import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { preparedOnce } from '../../db/prepared-once.js';
import { businesses, users } from '../../db/schema.js';
import { isUuid } from '../ids.js';
import type { Business, NewUser, User } from './user.js';

type UserRow = typeof users.$inferSelect;

function toUser(row: UserRow): User {
  return {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deletedDate: row.deletedDate,
    email: row.email,
    phone: row.phone,
    firstName: row.firstName,
    lastName: row.lastName,
    haveTransactionPin: row.transactionPinHash !== null,
    verified: row.verified,
    dob: row.dob,
    isAdmin: row.isAdmin,
    deviceId: row.deviceId,
    deviceIp: row.deviceIp,
    deviceModel: row.deviceModel,
    platform: row.platform,
    lastLoggedIn: row.lastLoggedIn,
  };
}

/**
 * One user by id, built once per database handle: the users' cache lapses every second, and the
 * query builder cost more CPU than the read (see api-key-store.ts). On PostgreSQL a named
 * prepared statement.
 */
const userLookup = preparedOnce((db) =>
  db
    .select()
    .from(users)
    .where(and(eq(users.id, sql.placeholder('id')), isNull(users.deletedDate)))
    .prepare('user_by_id'),
);

/** SQL for users and businesses. Every query is named by its function. */
export const userStore = {
  async insertUser(db: Executor, input: NewUser): Promise<User> {
    const [row] = await db
      .insert(users)
      .values({
        email: input.email.trim(),
        phone: input.phone ?? null,
        firstName: input.firstName ?? null,
        lastName: input.lastName ?? null,
        dob: input.dob ?? null,
        verified: input.verified ?? false,
        isAdmin: input.isAdmin ?? false,
        passwordHash: input.passwordHash ?? null,
      })
      .returning();
    return toUser(row!);
  },

  async findUsersByIds(db: Executor, ids: readonly string[]): Promise<User[]> {
    if (ids.length === 0) return [];
    if (ids.length === 1) {
      return (await userLookup(db).execute({ id: ids[0] })).map(toUser);
    }
    const rows = await db
      .select()
      .from(users)
      .where(and(inArray(users.id, [...ids]), isNull(users.deletedDate)));
    return rows.map(toUser);
  },

  async findUserByEmail(db: Executor, email: string): Promise<User | undefined> {
    const [row] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
    return row ? toUser(row) : undefined;
  },

  async countUsers(db: Executor): Promise<number> {
    const [row] = await db.select({ n: sql<string>`count(*)` }).from(users);
    return Number(row?.n ?? 0);
  },

  async insertBusiness(db: Executor, ownerUserId: string, name: string): Promise<Business> {
    const [row] = await db.insert(businesses).values({ ownerUserId, name: name.trim() }).returning();
    return row!;
  },

  async findBusinessesByOwner(db: Executor, ownerUserId: string): Promise<Business[]> {
    return db.select().from(businesses).where(eq(businesses.ownerUserId, ownerUserId)).orderBy(businesses.createdAt);
  },

  /** The owner's businesses among `ids`, for per-request loaders; another owner's are absent. */
  async findOwnedBusinessesByIds(db: Executor, ownerUserId: string, ids: readonly string[]): Promise<Business[]> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return [];
    return db
      .select()
      .from(businesses)
      .where(and(eq(businesses.ownerUserId, ownerUserId), inArray(businesses.id, wanted)));
  },
};
