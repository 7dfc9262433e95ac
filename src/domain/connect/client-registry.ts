import type { Database } from '../../db/client.js';
import { recordAudit } from '../audit/audit-log.js';
import type { AuditOrigin } from '../audit/request-context.js';
import { digestOf, newOpaqueToken, safeEqual } from '../auth/opaque-token.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { badInput, InputProblems, notFound } from '../errors.js';
import { checkFields } from '../field-checks.js';
import { OAuthError } from './oauth-error.js';
import { type OAuthClient, oauthStore } from './oauth-store.js';
import { isScope, SCOPE_NAMES } from './scopes.js';

export interface RegisterClientInput {
  name: string;
  environment: Environment;
  clientType: 'confidential' | 'public';
  redirectUris: string[];
  allowedScopes: string[];
}

export interface RegisteredClient {
  client: OAuthClient;
  /** Confidential clients only; shown once, stored as a hash. */
  clientSecret: string | undefined;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Developer apps: registration, listing, revocation, and client authentication at /connect/token. */
export class ClientRegistry {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** `origin`: the request's, with its actor (the dashboard session), for the audit record. */
  async register(ownerUserId: string, input: RegisterClientInput, origin?: AuditOrigin): Promise<RegisteredClient> {
    const { name, scopes } = checkFields({
      name: () => clientName(input.name),
      redirectUris: () => checkRedirectUris(input.redirectUris),
      scopes: () => checkScopes(input.allowedScopes),
    });
    const clientSecret = input.clientType === 'confidential' ? newOpaqueToken('pgw_cs_') : undefined;
    const client = await this.db.transaction(async (tx) => {
      const inserted = await oauthStore.insertClient(tx, {
        clientId: `pgw_app_${newOpaqueToken('').slice(0, 22)}`,
        ownerUserId,
        name,
        environment: input.environment,
        clientType: input.clientType,
        secretHash: clientSecret ? digestOf(clientSecret) : null,
        redirectUris: input.redirectUris,
        allowedScopes: scopes,
      });
      const changes = {
        clientId: { to: inserted.clientId },
        name: { to: name },
        clientType: { to: input.clientType },
        redirectUris: { to: input.redirectUris },
        allowedScopes: { to: scopes },
        ...(clientSecret ? { clientSecret: { changed: true as const } } : {}),
      };
      await recordAudit(
        tx,
        {
          userId: ownerUserId,
          environment: input.environment,
          action: 'connect_app.created',
          targetType: 'connect_app',
          targetId: inserted.id,
          changes,
          origin,
        },
        this.clock.now(),
      );
      return inserted;
    });
    return { client, clientSecret };
  }

  list(ownerUserId: string): Promise<OAuthClient[]> {
    return oauthStore.findClientsByOwner(this.db, ownerUserId);
  }

  /**
   * Deletes an app: every token it holds stops working at once. Another owner's app is not found.
   * `origin` as for register.
   */
  async revoke(ownerUserId: string, id: string, origin?: AuditOrigin): Promise<void> {
    await this.db.transaction(async (tx) => {
      const revoked = await oauthStore.revokeClient(tx, ownerUserId, id, this.clock.now());
      if (!revoked) throw notFound('App');
      await recordAudit(
        tx,
        {
          userId: ownerUserId,
          environment: revoked.environment,
          action: 'connect_app.deleted',
          targetType: 'connect_app',
          targetId: revoked.id,
          changes: { clientId: { from: revoked.clientId }, name: { from: revoked.name } },
          origin,
        },
        this.clock.now(),
      );
    });
  }

  find(clientId: string | undefined): Promise<OAuthClient | undefined> {
    if (!clientId || clientId.length > 100) return Promise.resolve(undefined);
    return oauthStore.findClientByClientId(this.db, clientId);
  }

  /**
   * RFC 6749 §2.3: confidential clients prove themselves with their secret (HTTP Basic or the
   * body); public clients send only client_id and are held to PKCE instead.
   */
  async authenticate(clientId: string | undefined, clientSecret: string | undefined): Promise<OAuthClient> {
    const client = await this.find(clientId);
    if (!client) throw new OAuthError('invalid_client', 'Unknown client_id, or the app was deleted.');
    if (client.clientType === 'public') {
      if (clientSecret) throw new OAuthError('invalid_client', 'This is a public client: it has no secret to send.');
      return client;
    }
    if (!clientSecret || !safeEqual(digestOf(clientSecret), client.secretHash ?? '')) {
      throw new OAuthError('invalid_client', 'The client secret is wrong or missing.');
    }
    return client;
  }
}

/** Absolute https URIs, or http on a loopback host for local development; no fragment (RFC 6749 §3.1.2). */
function checkRedirectUri(uri: string, field: string): void {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    throw badInput(field, `${field} must be an absolute URI.`);
  }
  if (parsed.hash || uri.includes('#')) throw badInput(field, `${field} must not contain a fragment.`);
  const loopbackHttp = parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname);
  if (parsed.protocol !== 'https:' && !loopbackHttp)
    throw badInput(field, `${field} must use https (http only on localhost, 127.0.0.1 or [::1]).`);
}

function clientName(given: string): string {
  const name = given.trim();
  if (name === '' || name.length > 100) throw badInput('name', 'name must be 1 to 100 characters.');
  return name;
}

/** Every URI checked, so one refusal names each bad one. */
function checkRedirectUris(uris: readonly string[]): void {
  if (uris.length === 0 || uris.length > 10) throw badInput('redirectUris', 'redirectUris must list 1 to 10 URIs.');
  const problems = new InputProblems();
  uris.forEach((uri, i) => problems.check(() => checkRedirectUri(uri, `redirectUris[${i}]`)));
  problems.throwIfAny();
}

function checkScopes(given: readonly string[]): string[] {
  const scopes = [...new Set(given)];
  if (scopes.length === 0)
    throw badInput('allowedScopes', `allowedScopes must list at least one of: ${SCOPE_NAMES.join(', ')}.`);
  const unknown = scopes.find((s) => !isScope(s));
  if (unknown)
    throw badInput('allowedScopes', `allowedScopes: "${unknown}" is not a scope (${SCOPE_NAMES.join(', ')}).`);
  return scopes;
}
