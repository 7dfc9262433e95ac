import { and, desc, eq, gt, isNull } from 'drizzle-orm';
import { oauthClients, oauthCodes, oauthGrants, oauthTokens } from '../../db/accounts-schema.js';
import type { Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';

export interface OAuthClient {
  id: string;
  clientId: string;
  ownerUserId: string;
  name: string;
  environment: Environment;
  clientType: 'confidential' | 'public';
  secretHash: string | null;
  redirectUris: string[];
  allowedScopes: string[];
  /** Browser origins its tokens may be used from; empty: the gateway's CORS_ORIGINS. */
  allowedOrigins: string[];
  trustedDocumentsOnly: boolean;
  graphqlMaxCost: number | null;
  graphqlMaxDepth: number | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface IssuedToken {
  kind: 'access' | 'refresh';
  tokenHash: string;
  scopes: string[];
  expiresAt: Date;
}

/** SQL for OAuth clients, codes, grants and tokens. Every query is named by its function. */
export const oauthStore = {
  async insertClient(
    db: Executor,
    row: Omit<
      OAuthClient,
      | 'id'
      | 'createdAt'
      | 'revokedAt'
      | 'allowedOrigins'
      | 'trustedDocumentsOnly'
      | 'graphqlMaxCost'
      | 'graphqlMaxDepth'
    >,
  ): Promise<OAuthClient> {
    const [inserted] = await db.insert(oauthClients).values(row).returning();
    return inserted!;
  },

  async findClientByClientId(db: Executor, clientId: string): Promise<OAuthClient | undefined> {
    const [row] = await db
      .select()
      .from(oauthClients)
      .where(and(eq(oauthClients.clientId, clientId), isNull(oauthClients.revokedAt)));
    return row;
  },

  async findClientsByOwner(db: Executor, ownerUserId: string): Promise<OAuthClient[]> {
    return db
      .select()
      .from(oauthClients)
      .where(and(eq(oauthClients.ownerUserId, ownerUserId), isNull(oauthClients.revokedAt)))
      .orderBy(desc(oauthClients.createdAt));
  },

  async revokeClient(db: Executor, ownerUserId: string, id: string, at: Date): Promise<OAuthClient | undefined> {
    const [row] = await db
      .update(oauthClients)
      .set({ revokedAt: at })
      .where(and(eq(oauthClients.id, id), eq(oauthClients.ownerUserId, ownerUserId), isNull(oauthClients.revokedAt)))
      .returning();
    return row;
  },

  async insertCode(db: Executor, row: typeof oauthCodes.$inferInsert): Promise<void> {
    await db.insert(oauthCodes).values(row);
  },

  /** Locks the code's row: two redemptions of one code run one after the other. */
  async lockCode(db: Executor, codeHash: string) {
    const [row] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash)).for('update');
    return row;
  },

  async markCodeUsed(db: Executor, id: string, at: Date, grantId: string | null): Promise<void> {
    await db.update(oauthCodes).set({ usedAt: at, grantId }).where(eq(oauthCodes.id, id));
  },

  async insertGrant(
    db: Executor,
    row: { clientPk: string; userId: string; environment: Environment; scopes: string[] },
  ): Promise<string> {
    const [inserted] = await db.insert(oauthGrants).values(row).returning({ id: oauthGrants.id });
    return inserted!.id;
  },

  async revokeGrant(db: Executor, id: string, at: Date, reason: string): Promise<void> {
    await db
      .update(oauthGrants)
      .set({ revokedAt: at, revokedReason: reason })
      .where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt)));
  },

  /** A user withdrawing an app's access: every grant of that client for that user. */
  async revokeGrantsOf(db: Executor, userId: string, clientPk: string, at: Date): Promise<number> {
    const rows = await db
      .update(oauthGrants)
      .set({ revokedAt: at, revokedReason: 'user' })
      .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.clientPk, clientPk), isNull(oauthGrants.revokedAt)))
      .returning({ id: oauthGrants.id });
    return rows.length;
  },

  async insertTokens(db: Executor, grantId: string, tokens: IssuedToken[]): Promise<void> {
    await db.insert(oauthTokens).values(tokens.map((t) => ({ grantId, ...t })));
  },

  /** A token with its grant and client, locked, for refresh rotation and revocation. */
  async lockToken(db: Executor, tokenHash: string) {
    const [row] = await db
      .select({ token: oauthTokens, grant: oauthGrants, clientId: oauthClients.clientId })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientPk))
      .where(eq(oauthTokens.tokenHash, tokenHash))
      .for('update', { of: oauthTokens });
    return row;
  },

  async markTokenUsed(db: Executor, id: string, at: Date): Promise<void> {
    await db.update(oauthTokens).set({ usedAt: at }).where(eq(oauthTokens.id, id));
  },

  async revokeToken(db: Executor, id: string, at: Date): Promise<void> {
    await db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.id, id), isNull(oauthTokens.revokedAt)));
  },

  /** What a live access token may do: nothing if it, its grant or its client is revoked or expired. */
  async findLiveAccessToken(db: Executor, tokenHash: string, now: Date) {
    const [row] = await db
      .select({
        grantId: oauthGrants.id,
        userId: oauthGrants.userId,
        environment: oauthGrants.environment,
        scopes: oauthTokens.scopes,
        appId: oauthClients.id,
        allowedOrigins: oauthClients.allowedOrigins,
        trustedDocumentsOnly: oauthClients.trustedDocumentsOnly,
        graphqlMaxCost: oauthClients.graphqlMaxCost,
        graphqlMaxDepth: oauthClients.graphqlMaxDepth,
      })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientPk))
      .where(
        and(
          eq(oauthTokens.tokenHash, tokenHash),
          eq(oauthTokens.kind, 'access'),
          isNull(oauthTokens.revokedAt),
          gt(oauthTokens.expiresAt, now),
          isNull(oauthGrants.revokedAt),
          isNull(oauthClients.revokedAt),
        ),
      );
    return row;
  },

  /** The user's live grants, with their app. */
  async findLiveGrantsOf(db: Executor, userId: string) {
    return db
      .select({
        clientPk: oauthClients.id,
        clientId: oauthClients.clientId,
        name: oauthClients.name,
        environment: oauthClients.environment,
        scopes: oauthGrants.scopes,
        createdAt: oauthGrants.createdAt,
      })
      .from(oauthGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientPk))
      .where(and(eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt), isNull(oauthClients.revokedAt)))
      .orderBy(oauthGrants.createdAt);
  },
};
