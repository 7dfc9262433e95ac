import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { accountSessions, accountTokens } from '../../db/accounts-schema.js';
import type { Executor } from '../../db/client.js';
import { users } from '../../db/schema.js';

export type AccountTokenPurpose = 'verify_email' | 'reset_password';

export interface SessionRecord {
  id: string;
  userId: string;
  expiresAt: Date;
}

/** SQL for sign-in sessions, mailed one-time tokens and the user's password and PIN. */
export const accountStore = {
  async insertSession(
    db: Executor,
    row: { userId: string; tokenHash: string; expiresAt: Date },
  ): Promise<SessionRecord> {
    const [inserted] = await db
      .insert(accountSessions)
      .values(row)
      .returning({ id: accountSessions.id, userId: accountSessions.userId, expiresAt: accountSessions.expiresAt });
    return inserted!;
  },

  async findLiveSession(db: Executor, tokenHash: string, now: Date): Promise<SessionRecord | undefined> {
    const [row] = await db
      .select({ id: accountSessions.id, userId: accountSessions.userId, expiresAt: accountSessions.expiresAt })
      .from(accountSessions)
      .innerJoin(users, eq(users.id, accountSessions.userId))
      .where(
        and(
          eq(accountSessions.tokenHash, tokenHash),
          isNull(accountSessions.revokedAt),
          gt(accountSessions.expiresAt, now),
          isNull(users.deletedDate),
        ),
      );
    return row;
  },

  async revokeSession(db: Executor, id: string, at: Date): Promise<void> {
    await db
      .update(accountSessions)
      .set({ revokedAt: at })
      .where(and(eq(accountSessions.id, id), isNull(accountSessions.revokedAt)));
  },

  async revokeSessionsOf(db: Executor, userId: string, at: Date): Promise<void> {
    await db
      .update(accountSessions)
      .set({ revokedAt: at })
      .where(and(eq(accountSessions.userId, userId), isNull(accountSessions.revokedAt)));
  },

  async insertToken(
    db: Executor,
    row: { userId: string; purpose: AccountTokenPurpose; tokenHash: string; expiresAt: Date },
  ): Promise<void> {
    await db.insert(accountTokens).values(row);
  },

  /** Marks a live token used and returns its user: one statement, so a link works exactly once. */
  async useToken(
    db: Executor,
    purpose: AccountTokenPurpose,
    tokenHash: string,
    now: Date,
  ): Promise<string | undefined> {
    const [row] = await db
      .update(accountTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(accountTokens.tokenHash, tokenHash),
          eq(accountTokens.purpose, purpose),
          isNull(accountTokens.usedAt),
          gt(accountTokens.expiresAt, now),
        ),
      )
      .returning({ userId: accountTokens.userId });
    return row?.userId;
  },

  /** A new link replaces the user's earlier unused ones of the same purpose. */
  async expireTokensOf(db: Executor, userId: string, purpose: AccountTokenPurpose, now: Date): Promise<void> {
    await db
      .update(accountTokens)
      .set({ usedAt: now })
      .where(and(eq(accountTokens.userId, userId), eq(accountTokens.purpose, purpose), isNull(accountTokens.usedAt)));
  },

  async findCredentials(db: Executor, email: string) {
    const [row] = await db
      .select({ id: users.id, passwordHash: users.passwordHash, verified: users.verified })
      .from(users)
      .where(and(sql`lower(${users.email}) = lower(${email.trim()})`, isNull(users.deletedDate)));
    return row;
  },

  async findSecretsOf(db: Executor, userId: string) {
    const [row] = await db
      .select({ passwordHash: users.passwordHash, transactionPinHash: users.transactionPinHash })
      .from(users)
      .where(eq(users.id, userId));
    return row;
  },

  async updateUser(
    db: Executor,
    userId: string,
    set: Partial<{ passwordHash: string; transactionPinHash: string; verified: boolean; lastLoggedIn: Date }>,
    at: Date,
  ): Promise<void> {
    await db
      .update(users)
      .set({ ...set, updatedAt: at })
      .where(eq(users.id, userId));
  },
};
