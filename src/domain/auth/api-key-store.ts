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
const activeColumns = {
  ...publicColumns,
  ipAllowList: apiKeyControls.ipAllowList,
  trustedDocumentsOnly: apiKeyControls.trustedDocumentsOnly,
  graphqlMaxCost: apiKeyControls.graphqlMaxCost,
  graphqlMaxDepth: apiKeyControls.graphqlMaxDepth,
};

const activeKeyLookup = preparedOnce((db) =>
  db
    .select(activeColumns)
    .from(apiKeys)
    .leftJoin(apiKeyControls, eq(apiKeyControls.apiKeyId, apiKeys.id))
    .where(and(eq(apiKeys.keyHash, sql.placeholder('keyHash')), isNull(apiKeys.revokedAt)))
    .prepare('api_key_active_by_hash'),
);

/**
 * The same read for many keys at once: the live sockets' re-check reads every key they hold each
 * second, and one statement for them all costs the process far less than one per key (100 keys
 * on an instance sent 100 statements a second).
 */
const activeKeysLookup = preparedOnce((db) =>
  db
    .select({ ...activeColumns, keyHash: apiKeys.keyHash })
    .from(apiKeys)
    .leftJoin(apiKeyControls, eq(apiKeyControls.apiKeyId, apiKeys.id))
    .where(and(sql`${apiKeys.keyHash} = any(${sql.placeholder('keyHashes')}::text[])`, isNull(apiKeys.revokedAt)))
    .prepare('api_keys_active_by_hashes'),
);

export type ActiveApiKey = ApiKeyRecord & GraphQLAccessColumns & { ipAllowList: string[] | null };

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
  async findActiveApiKeyByHash(db: Executor, keyHash: string): Promise<ActiveApiKey | undefined> {
    const [row] = await activeKeyLookup(db).execute({ keyHash });
    return row;
  },

  /** `findActiveApiKeyByHash` for many hashes in one statement: the active keys found, by hash. */
  async findActiveApiKeysByHashes(db: Executor, keyHashes: readonly string[]): Promise<Map<string, ActiveApiKey>> {
    const rows = await activeKeysLookup(db).execute({ keyHashes });
    const found = new Map<string, ActiveApiKey>();
    for (const { keyHash, ...row } of rows) found.set(keyHash, row);
    return found;
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
