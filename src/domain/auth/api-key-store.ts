import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { preparedOnce } from '../../db/prepared-once.js';
import { apiKeyControls } from '../../db/controls-schema.js';
import { apiKeys } from '../../db/schema.js';
import type { GraphQLAccessColumns } from '../graphql-access/graphql-access.js';
import type { Environment, PermissionLevel } from './permissions.js';

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  environment: Environment;
  permission: PermissionLevel;
  displayPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const publicColumns = {
  id: apiKeys.id,
  userId: apiKeys.userId,
  name: apiKeys.name,
  environment: apiKeys.environment,
  permission: apiKeys.permission,
  displayPrefix: apiKeys.displayPrefix,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

/**
 * Authentication's one read, built once per database handle (preparedOnce): every second each key's cached
 * principal lapses and live sockets re-check it, and building this join through the query
 * builder on every lookup cost more of the process's CPU than running it (`npm run bench:events`
 * profile in docs/benchmarks.md). On PostgreSQL it is also a named prepared statement.
 */
const activeKeyLookup = preparedOnce((db) =>
  db
    .select({
      ...publicColumns,
      ipAllowList: apiKeyControls.ipAllowList,
      trustedDocumentsOnly: apiKeyControls.trustedDocumentsOnly,
      graphqlMaxCost: apiKeyControls.graphqlMaxCost,
      graphqlMaxDepth: apiKeyControls.graphqlMaxDepth,
    })
    .from(apiKeys)
    .leftJoin(apiKeyControls, eq(apiKeyControls.apiKeyId, apiKeys.id))
    .where(and(eq(apiKeys.keyHash, sql.placeholder('keyHash')), isNull(apiKeys.revokedAt)))
    .prepare('api_key_active_by_hash'),
);

export const apiKeyStore = {
  async insertApiKey(
    db: Executor,
    row: {
      userId: string;
      name: string;
      environment: Environment;
      permission: PermissionLevel;
      keyHash: string;
      displayPrefix: string;
    },
  ): Promise<ApiKeyRecord> {
    const [inserted] = await db.insert(apiKeys).values(row).returning(publicColumns);
    return inserted!;
  },

  /**
   * With the key's IP allow-list (null: none) and GraphQL settings, which authentication checks on
   * every request (one read for all: the controls row is joined).
   */
  async findActiveApiKeyByHash(
    db: Executor,
    keyHash: string,
  ): Promise<(ApiKeyRecord & GraphQLAccessColumns & { ipAllowList: string[] | null }) | undefined> {
    const [row] = await activeKeyLookup(db).execute({ keyHash });
    return row;
  },

  /** One key of the user's (another user's key reads as missing). */
  async findOwnedApiKey(db: Executor, userId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await db
      .select(publicColumns)
      .from(apiKeys)
      .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId)));
    return row;
  },

  async findApiKeysByUser(db: Executor, userId: string): Promise<ApiKeyRecord[]> {
    return db.select(publicColumns).from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.createdAt));
  },

  async revokeApiKey(db: Executor, id: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const [row] = await db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning(publicColumns);
    return row;
  },

  async touchApiKey(db: Executor, id: string, at: Date): Promise<void> {
    await db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id));
  },
};
