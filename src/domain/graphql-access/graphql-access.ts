/**
 * What a credential may do over GraphQL beyond its abilities: run only its trusted documents, and
 * within its own cost and depth limits. Settings belong to an API key or to a Connect app (every
 * token of the app shares them). REST v1 routes run the gateway's own reviewed documents and are
 * not held to them.
 */

/** A key or an app, as the owner of GraphQL settings and trusted documents. */
export interface CredentialRef {
  kind: 'api_key' | 'connect_app';
  /** api_keys.id or oauth_clients.id. */
  id: string;
}

export interface GraphQLAccess {
  owner: CredentialRef;
  /** True: only documents registered for `owner` run (docs/graphql.md, "Trusted documents"). */
  trustedDocumentsOnly: boolean;
  /** The credential's own limits, at most the gateway's; null: the gateway's. */
  maxCost: number | null;
  maxDepth: number | null;
}

/** The columns the settings are stored in (api_key_controls and oauth_clients both have them). */
export interface GraphQLAccessColumns {
  trustedDocumentsOnly: boolean | null;
  graphqlMaxCost: number | null;
  graphqlMaxDepth: number | null;
}

/**
 * The settings of a credential as its principal carries them, or undefined when none is set: a
 * principal without them costs a request nothing more than before.
 */
export function graphqlAccessOf(owner: CredentialRef, columns: GraphQLAccessColumns): GraphQLAccess | undefined {
  const access = {
    owner,
    trustedDocumentsOnly: columns.trustedDocumentsOnly ?? false,
    maxCost: columns.graphqlMaxCost ?? null,
    maxDepth: columns.graphqlMaxDepth ?? null,
  };
  return access.trustedDocumentsOnly || access.maxCost !== null || access.maxDepth !== null ? access : undefined;
}

export const sameCredential = (a: CredentialRef, b: CredentialRef) => a.kind === b.kind && a.id === b.id;

/** The credential a principal's own settings would be stored under: its key, or its token's app. */
export function credentialOfPrincipal(principal: {
  kind: string;
  credentialId: string;
  app?: { id: string };
}): CredentialRef | undefined {
  if (principal.kind === 'api_key') return { kind: 'api_key', id: principal.credentialId };
  if (principal.kind === 'oauth_token' && principal.app) return { kind: 'connect_app', id: principal.app.id };
  return undefined;
}
