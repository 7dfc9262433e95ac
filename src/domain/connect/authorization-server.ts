import type { Database, Tx } from '../../db/client.js';
import { recordAudit } from '../audit/audit-log.js';
import type { AuditOrigin } from '../audit/request-context.js';
import { digestOf, hasTokenShape, newOpaqueToken } from '../auth/opaque-token.js';
import type { Principal } from '../auth/principal.js';
import { graphqlAccessOf } from '../graphql-access/graphql-access.js';
import type { Clock } from '../clock.js';
import { OAuthError } from './oauth-error.js';
import { type IssuedToken, type OAuthClient, oauthStore } from './oauth-store.js';
import { isS256Challenge, verifierMatches } from './pkce.js';
import { abilitiesOfScopes, isScope, parseScopeParameter, type Scope, SCOPE_NAMES } from './scopes.js';

export const CODE_TTL_MS = 10 * 60_000;
export const ACCESS_TOKEN_TTL_MS = 3600_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;

const ACCESS_PREFIX = 'pgw_at_';
const REFRESH_PREFIX = 'pgw_rt_';
const CODE_PREFIX = 'pgw_ac_';

/** The query parameters of GET /connect/authorize (RFC 6749 §4.1.1, RFC 7636 §4.3). */
export interface AuthorizeParameters {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

/** A checked authorization request, ready for the user's consent. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string | undefined;
}

/** Why a request was refused, and whether the refusal may go back to the redirect URI. */
export type AuthorizeCheck =
  | { ok: true; request: AuthorizationRequest }
  | { ok: false; error: OAuthError; redirectTo?: { uri: string; state: string | undefined } };

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface ConnectedApp {
  clientPk: string;
  clientId: string;
  name: string;
  environment: string;
  scopes: string[];
  connectedAt: Date;
}

/**
 * The authorization server's rules: authorization requests, codes (10 minutes, once; a reused
 * code revokes what it granted), PKCE S256, refresh-token rotation (a replayed old refresh token
 * revokes the grant), RFC 7009 revocation, and access tokens as credentials.
 */
export class AuthorizationServer {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly findClient: (clientId: string | undefined) => Promise<OAuthClient | undefined>,
  ) {}

  async checkAuthorizeRequest(params: AuthorizeParameters): Promise<AuthorizeCheck> {
    const client = await this.findClient(params.client_id);
    if (!client)
      return { ok: false, error: new OAuthError('invalid_request', 'Unknown client_id, or the app was deleted.') };
    // Only a registered redirect URI, character for character, may receive anything (RFC 6749 §3.1.2.4).
    if (!params.redirect_uri || !client.redirectUris.includes(params.redirect_uri)) {
      return {
        ok: false,
        error: new OAuthError(
          'invalid_request',
          'redirect_uri is missing or is not one registered for this app (compared character for character).',
        ),
      };
    }
    const back = { uri: params.redirect_uri, state: params.state };
    const refuse = (error: OAuthError): AuthorizeCheck => ({ ok: false, error, redirectTo: back });
    if (params.response_type !== 'code')
      return refuse(new OAuthError('unsupported_response_type', 'response_type must be "code".'));
    const scopes = params.scope === undefined ? ['read'] : parseScopeParameter(params.scope);
    const bad = scopes.find((s) => !isScope(s) || !client.allowedScopes.includes(s));
    if (scopes.length === 0 || bad) {
      return refuse(
        new OAuthError(
          'invalid_scope',
          `scope must be among this app's scopes (${client.allowedScopes.join(' ')})${bad ? `; "${bad}" is not` : ''}.`,
        ),
      );
    }
    const method = params.code_challenge_method;
    if (params.code_challenge !== undefined || method !== undefined) {
      if (method !== 'S256')
        return refuse(new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is not accepted).'));
      if (!params.code_challenge || !isS256Challenge(params.code_challenge))
        return refuse(
          new OAuthError(
            'invalid_request',
            'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).',
          ),
        );
    } else if (client.clientType === 'public') {
      return refuse(
        new OAuthError(
          'invalid_request',
          'Public clients must use PKCE: send code_challenge with code_challenge_method=S256.',
        ),
      );
    }
    return {
      ok: true,
      request: {
        client,
        redirectUri: params.redirect_uri,
        scopes: SCOPE_NAMES.filter((s) => scopes.includes(s)),
        state: params.state,
        codeChallenge: params.code_challenge,
      },
    };
  }

  /**
   * The user approved: a code for the client, valid 10 minutes, once. `origin`: the consent
   * request's, with its actor (the sign-in session), for the audit record.
   */
  async issueCode(request: AuthorizationRequest, userId: string, origin?: AuditOrigin): Promise<string> {
    const code = newOpaqueToken(CODE_PREFIX);
    await this.db.transaction(async (tx) => {
      await oauthStore.insertCode(tx, {
        codeHash: digestOf(code),
        clientPk: request.client.id,
        userId,
        redirectUri: request.redirectUri,
        scopes: request.scopes,
        codeChallenge: request.codeChallenge ?? null,
        expiresAt: new Date(this.clock.now().getTime() + CODE_TTL_MS),
      });
      // The user's consent is the grant's origin; the code itself is a secret and stays out.
      await recordAudit(
        tx,
        {
          userId,
          environment: request.client.environment,
          action: 'connect_grant.approved',
          targetType: 'connect_app',
          targetId: request.client.id,
          changes: { clientId: { to: request.client.clientId }, scopes: { to: request.scopes } },
          origin,
        },
        this.clock.now(),
      );
    });
    return code;
  }

  /**
   * authorization_code grant. The code's row is locked, so of two concurrent redemptions one
   * wins and the other sees it used; a used code revokes the grant it produced (RFC 6749 §4.1.2).
   * Refusals that change state commit before they are thrown.
   */
  async redeemCode(
    client: OAuthClient,
    input: { code?: string; redirectUri?: string; codeVerifier?: string },
  ): Promise<TokenResponse> {
    if (!input.code) throw new OAuthError('invalid_request', 'code is required.');
    if (!input.redirectUri)
      throw new OAuthError('invalid_request', 'redirect_uri is required: the same one sent to /connect/authorize.');
    const now = this.clock.now();
    const outcome = await this.db.transaction(async (tx): Promise<TokenResponse | OAuthError> => {
      const code = await oauthStore.lockCode(tx, digestOf(input.code!));
      if (!code || code.clientPk !== client.id)
        return new OAuthError('invalid_grant', 'The authorization code is invalid.');
      if (code.usedAt) {
        if (code.grantId) await oauthStore.revokeGrant(tx, code.grantId, now, 'reused_code');
        return new OAuthError(
          'invalid_grant',
          'The authorization code was already used; every token issued from it is now revoked.',
        );
      }
      await oauthStore.markCodeUsed(tx, code.id, now, null);
      if (code.expiresAt.getTime() <= now.getTime())
        return new OAuthError('invalid_grant', 'The authorization code expired (codes live 10 minutes).');
      if (code.redirectUri !== input.redirectUri)
        return new OAuthError('invalid_grant', 'redirect_uri differs from the one in the authorization request.');
      if (
        code.codeChallenge ? !verifierMatches(input.codeVerifier, code.codeChallenge) : input.codeVerifier !== undefined
      ) {
        return new OAuthError(
          'invalid_grant',
          'code_verifier does not match the code_challenge of the authorization request.',
        );
      }
      const grantId = await oauthStore.insertGrant(tx, {
        clientPk: client.id,
        userId: code.userId,
        environment: client.environment,
        scopes: code.scopes,
      });
      await oauthStore.markCodeUsed(tx, code.id, now, grantId);
      return this.issueTokens(tx, grantId, code.scopes, now);
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  /** refresh_token grant: the old refresh token is spent; showing it again revokes the whole grant. */
  async refresh(client: OAuthClient, input: { refreshToken?: string; scope?: string }): Promise<TokenResponse> {
    if (!input.refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required.');
    const now = this.clock.now();
    const outcome = await this.db.transaction(async (tx): Promise<TokenResponse | OAuthError> => {
      const found = await oauthStore.lockToken(tx, digestOf(input.refreshToken!));
      if (found?.token.kind !== 'refresh' || found.clientId !== client.clientId)
        return new OAuthError('invalid_grant', 'The refresh token is invalid.');
      const { token, grant } = found;
      if (grant.revokedAt || token.revokedAt) return new OAuthError('invalid_grant', 'The refresh token was revoked.');
      if (token.usedAt) {
        await oauthStore.revokeGrant(tx, grant.id, now, 'refresh_replay');
        return new OAuthError(
          'invalid_grant',
          'The refresh token was already used; the grant is now revoked and the user must authorize again.',
        );
      }
      if (token.expiresAt.getTime() <= now.getTime())
        return new OAuthError('invalid_grant', 'The refresh token expired.');
      const asked = input.scope === undefined ? token.scopes : parseScopeParameter(input.scope);
      const broader = asked.find((s) => !token.scopes.includes(s));
      if (asked.length === 0 || broader)
        return new OAuthError('invalid_scope', `scope may only narrow the granted scopes (${token.scopes.join(' ')}).`);
      await oauthStore.markTokenUsed(tx, token.id, now);
      return this.issueTokens(tx, grant.id, asked, now);
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  /**
   * RFC 7009. A refresh token revokes its grant (and so every token of it); an access token
   * revokes itself. Unknown tokens and other clients' tokens change nothing and answer the same.
   */
  async revoke(client: OAuthClient, tokenValue: string | undefined): Promise<void> {
    if (!tokenValue) throw new OAuthError('invalid_request', 'token is required.');
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      const found = await oauthStore.lockToken(tx, digestOf(tokenValue));
      if (!found || found.clientId !== client.clientId) return;
      if (found.token.kind === 'refresh') await oauthStore.revokeGrant(tx, found.grant.id, now, 'token_revocation');
      else await oauthStore.revokeToken(tx, found.token.id, now);
    });
  }

  /** The principal of a live access token, checked on every call (no cache: revocation bites at once). */
  async authenticateAccessToken(value: string): Promise<Principal | undefined> {
    if (!hasTokenShape(value, ACCESS_PREFIX)) return undefined;
    const row = await oauthStore.findLiveAccessToken(this.db, digestOf(value), this.clock.now());
    if (!row) return undefined;
    const graphql = graphqlAccessOf({ kind: 'connect_app', id: row.appId }, row);
    return {
      kind: 'oauth_token',
      credentialId: row.grantId,
      userId: row.userId,
      environment: row.environment,
      abilities: abilitiesOfScopes(row.scopes),
      app: { id: row.appId, allowedOrigins: row.allowedOrigins },
      ...(graphql ? { graphql } : {}),
    };
  }

  /** The apps holding live grants for the user, one entry per app. */
  async connectedApps(userId: string): Promise<ConnectedApp[]> {
    const apps = new Map<string, ConnectedApp>();
    for (const grant of await oauthStore.findLiveGrantsOf(this.db, userId)) {
      const app = apps.get(grant.clientPk);
      if (app) app.scopes = [...new Set([...app.scopes, ...grant.scopes])];
      else
        apps.set(grant.clientPk, {
          clientPk: grant.clientPk,
          clientId: grant.clientId,
          name: grant.name,
          environment: grant.environment,
          scopes: grant.scopes,
          connectedAt: grant.createdAt,
        });
    }
    return [...apps.values()];
  }

  /** The user withdraws an app's access: its tokens answer 401 from the next call. `origin` as for issueCode. */
  async disconnectApp(userId: string, clientPk: string, origin?: AuditOrigin): Promise<void> {
    await this.db.transaction(async (tx) => {
      await oauthStore.revokeGrantsOf(tx, userId, clientPk, this.clock.now());
      await recordAudit(
        tx,
        {
          userId,
          environment: null,
          action: 'connect_grant.revoked',
          targetType: 'connect_app',
          targetId: clientPk,
          changes: {},
          origin,
        },
        this.clock.now(),
      );
    });
  }

  private async issueTokens(tx: Tx, grantId: string, scopes: string[], now: Date): Promise<TokenResponse> {
    const access = newOpaqueToken(ACCESS_PREFIX);
    const refresh = newOpaqueToken(REFRESH_PREFIX);
    const at = (ms: number) => new Date(now.getTime() + ms);
    const tokens: IssuedToken[] = [
      { kind: 'access', tokenHash: digestOf(access), scopes, expiresAt: at(ACCESS_TOKEN_TTL_MS) },
      { kind: 'refresh', tokenHash: digestOf(refresh), scopes, expiresAt: at(REFRESH_TOKEN_TTL_MS) },
    ];
    await oauthStore.insertTokens(tx, grantId, tokens);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: refresh,
      scope: scopes.join(' '),
    };
  }
}
