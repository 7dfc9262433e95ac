import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { environmentEnum, userRef } from './schema.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A signed-in browser: the cookie holds a random token, the row only its SHA-256. */
export const accountSessions = pgTable(
  'account_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: userRef(),
    tokenHash: text('token_hash').notNull(),
    createdAt: createdAt(),
    expiresAt: at('expires_at').notNull(),
    revokedAt: at('revoked_at'),
  },
  (t) => [uniqueIndex('account_sessions_token_key').on(t.tokenHash), index('account_sessions_user_idx').on(t.userId)],
);

/** One-time links mailed to a user (email verification, password reset), stored hashed. */
export const accountTokenPurposeEnum = pgEnum('account_token_purpose', ['verify_email', 'reset_password']);

export const accountTokens = pgTable(
  'account_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: userRef(),
    purpose: accountTokenPurposeEnum('purpose').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: createdAt(),
    expiresAt: at('expires_at').notNull(),
    usedAt: at('used_at'),
  },
  (t) => [
    uniqueIndex('account_tokens_hash_key').on(t.tokenHash),
    index('account_tokens_user_idx').on(t.userId, t.purpose),
  ],
);

export const oauthClientTypeEnum = pgEnum('oauth_client_type', ['confidential', 'public']);

/** A third-party app registered by a developer: it acts in one environment, for users who consent. */
export const oauthClients = pgTable(
  'oauth_clients',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The public identifier apps send as client_id. */
    clientId: text('client_id').notNull(),
    ownerUserId: userRef('owner_user_id'),
    name: text('name').notNull(),
    environment: environmentEnum('environment').notNull(),
    clientType: oauthClientTypeEnum('client_type').notNull(),
    /** SHA-256 of the client secret; null for public clients, which must use PKCE. */
    secretHash: text('secret_hash'),
    redirectUris: text('redirect_uris').array().notNull(),
    allowedScopes: text('allowed_scopes').array().notNull(),
    /** Browser origins (scheme://host[:port]) its access tokens may be used from; empty = the gateway's CORS_ORIGINS. */
    allowedOrigins: text('allowed_origins').array().notNull().default(sql`'{}'::text[]`),
    /** GraphQL with its tokens runs only the app's trusted documents (docs/graphql.md). */
    trustedDocumentsOnly: boolean('trusted_documents_only').notNull().default(false),
    /** The app's own GraphQL cost and depth limits, at most the gateway's; null = the gateway's. */
    graphqlMaxCost: integer('graphql_max_cost'),
    graphqlMaxDepth: integer('graphql_max_depth'),
    createdAt: createdAt(),
    revokedAt: at('revoked_at'),
  },
  (t) => [
    uniqueIndex('oauth_clients_client_id_key').on(t.clientId),
    index('oauth_clients_owner_idx').on(t.ownerUserId),
  ],
);

/**
 * What one redeemed authorization code granted: the tokens issued from it and from their
 * refreshes hang off the grant, so revoking the grant revokes every one of them at once.
 */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    clientPk: uuid('client_pk')
      .notNull()
      .references(() => oauthClients.id),
    userId: userRef(),
    environment: environmentEnum('environment').notNull(),
    scopes: text('scopes').array().notNull(),
    createdAt: createdAt(),
    revokedAt: at('revoked_at'),
    /** Why it was revoked: user, reused_code, refresh_replay, client_revoked, token_revocation. */
    revokedReason: text('revoked_reason'),
  },
  (t) => [index('oauth_grants_user_idx').on(t.userId, t.clientPk)],
);

export const oauthCodes = pgTable(
  'oauth_codes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    codeHash: text('code_hash').notNull(),
    clientPk: uuid('client_pk')
      .notNull()
      .references(() => oauthClients.id),
    userId: userRef(),
    redirectUri: text('redirect_uri').notNull(),
    scopes: text('scopes').array().notNull(),
    codeChallenge: text('code_challenge'),
    createdAt: createdAt(),
    expiresAt: at('expires_at').notNull(),
    usedAt: at('used_at'),
    /** The grant its redemption created: revoked if the code is presented again. */
    grantId: uuid('grant_id').references(() => oauthGrants.id),
  },
  (t) => [uniqueIndex('oauth_codes_hash_key').on(t.codeHash)],
);

export const oauthTokenKindEnum = pgEnum('oauth_token_kind', ['access', 'refresh']);

export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    grantId: uuid('grant_id')
      .notNull()
      .references(() => oauthGrants.id),
    kind: oauthTokenKindEnum('kind').notNull(),
    tokenHash: text('token_hash').notNull(),
    scopes: text('scopes').array().notNull(),
    createdAt: createdAt(),
    expiresAt: at('expires_at').notNull(),
    /** A refresh token is used once: its use rotates it; showing it again revokes the grant. */
    usedAt: at('used_at'),
    revokedAt: at('revoked_at'),
  },
  (t) => [uniqueIndex('oauth_tokens_hash_key').on(t.tokenHash), index('oauth_tokens_grant_idx').on(t.grantId)],
);
