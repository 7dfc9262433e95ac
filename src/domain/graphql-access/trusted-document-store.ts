import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import { oauthClients } from '../../db/accounts-schema.js';
import type { Executor } from '../../db/client.js';
import { apiKeyControls, trustedDocuments } from '../../db/controls-schema.js';
import { apiKeys } from '../../db/schema.js';
import type { Environment } from '../auth/permissions.js';
import type { CredentialRef, GraphQLAccessColumns } from './graphql-access.js';

export interface TrustedDocumentRow {
  hash: string;
  canonicalHash: string;
  body: string;
  operationName: string | null;
  createdAt: Date;
}

/** A credential as its owner sees it: whose, which environment, and its stored settings. */
export interface OwnedCredential extends GraphQLAccessColumns {
  ref: CredentialRef;
  userId: string;
  environment: Environment;
  /** Connect apps only; empty for keys. */
  allowedOrigins: string[];
}

const ownerColumn = (ref: CredentialRef) =>
  ref.kind === 'api_key' ? trustedDocuments.apiKeyId : trustedDocuments.appId;

const ownerValues = (ref: CredentialRef) =>
  ref.kind === 'api_key' ? { apiKeyId: ref.id, appId: null } : { apiKeyId: null, appId: ref.id };

/** SQL for trusted documents and the GraphQL settings of keys and apps. Every query is named by its function. */
export const trustedDocumentStore = {
  /** A live (not revoked) key or app of the user's, with its settings; undefined for anything else. */
  async findOwnedCredential(db: Executor, userId: string, ref: CredentialRef): Promise<OwnedCredential | undefined> {
    if (ref.kind === 'api_key') {
      const [row] = await db
        .select({
          environment: apiKeys.environment,
          trustedDocumentsOnly: apiKeyControls.trustedDocumentsOnly,
          graphqlMaxCost: apiKeyControls.graphqlMaxCost,
          graphqlMaxDepth: apiKeyControls.graphqlMaxDepth,
        })
        .from(apiKeys)
        .leftJoin(apiKeyControls, eq(apiKeyControls.apiKeyId, apiKeys.id))
        .where(and(eq(apiKeys.id, ref.id), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
      return row && { ...row, ref, userId, allowedOrigins: [] };
    }
    const [row] = await db
      .select({
        environment: oauthClients.environment,
        trustedDocumentsOnly: oauthClients.trustedDocumentsOnly,
        graphqlMaxCost: oauthClients.graphqlMaxCost,
        graphqlMaxDepth: oauthClients.graphqlMaxDepth,
        allowedOrigins: oauthClients.allowedOrigins,
      })
      .from(oauthClients)
      .where(and(eq(oauthClients.id, ref.id), eq(oauthClients.ownerUserId, userId), isNull(oauthClients.revokedAt)));
    return row && { ...row, ref, userId };
  },

  async writeKeySettings(db: Executor, keyId: string, columns: GraphQLAccessColumns, at: Date): Promise<void> {
    const values = { ...columns, trustedDocumentsOnly: columns.trustedDocumentsOnly ?? false };
    await db
      .insert(apiKeyControls)
      .values({ apiKeyId: keyId, ...values, updatedAt: at })
      .onConflictDoUpdate({ target: apiKeyControls.apiKeyId, set: { ...values, updatedAt: at } });
  },

  async writeAppSettings(
    db: Executor,
    appId: string,
    columns: GraphQLAccessColumns & { allowedOrigins: string[] },
  ): Promise<void> {
    await db
      .update(oauthClients)
      .set({ ...columns, trustedDocumentsOnly: columns.trustedDocumentsOnly ?? false })
      .where(eq(oauthClients.id, appId));
  },

  async listDocuments(db: Executor, ref: CredentialRef): Promise<TrustedDocumentRow[]> {
    return db
      .select({
        hash: trustedDocuments.hash,
        canonicalHash: trustedDocuments.canonicalHash,
        body: trustedDocuments.body,
        operationName: trustedDocuments.operationName,
        createdAt: trustedDocuments.createdAt,
      })
      .from(trustedDocuments)
      .where(eq(ownerColumn(ref), ref.id))
      .orderBy(asc(trustedDocuments.createdAt), asc(trustedDocuments.hash));
  },

  /** Inserts the documents the credential lacks; answers the hashes it inserted. */
  async insertDocuments(
    db: Executor,
    ref: CredentialRef,
    documents: Array<Omit<TrustedDocumentRow, 'createdAt'>>,
  ): Promise<string[]> {
    if (documents.length === 0) return [];
    const rows = await db
      .insert(trustedDocuments)
      .values(documents.map((d) => ({ ...ownerValues(ref), ...d })))
      .onConflictDoNothing()
      .returning({ hash: trustedDocuments.hash });
    return rows.map((r) => r.hash);
  },

  async countDocuments(db: Executor, ref: CredentialRef): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(trustedDocuments)
      .where(eq(ownerColumn(ref), ref.id));
    return Number(row?.n ?? 0);
  },

  async deleteDocuments(db: Executor, ref: CredentialRef, hashes: string[]): Promise<string[]> {
    if (hashes.length === 0) return [];
    const rows = await db
      .delete(trustedDocuments)
      .where(and(eq(ownerColumn(ref), ref.id), inArray(trustedDocuments.hash, hashes)))
      .returning({ hash: trustedDocuments.hash });
    return rows.map((r) => r.hash);
  },

  /** Every browser origin a live app registered: what a preflight (which carries no credential) is answered for. */
  async allAppOrigins(db: Executor): Promise<string[]> {
    const rows = await db
      .selectDistinct({ origin: sql<string>`unnest(${oauthClients.allowedOrigins})` })
      .from(oauthClients)
      .where(isNull(oauthClients.revokedAt));
    return rows.map((r) => r.origin);
  },
};
