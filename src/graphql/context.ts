import { safeEqual } from '../domain/auth/opaque-token.js';
import { type Principal, principalFrom } from '../domain/auth/principal.js';
import { DomainError } from '../domain/errors.js';
import type { CallerCredential, CredentialScheme } from '../domain/users/user-directory.js';
import type { Services } from '../services.js';
import { createLoaders, type Loaders } from './loaders.js';

/** What every resolver gets, whether the operation came over /graphql, REST v1 or WebSocket. */
export interface GraphQLContext {
  principal: Principal | null;
  /** True when a credential was sent but did not authenticate (so the error can say which). */
  credentialRejected: boolean;
  /** Why a valid credential may not be used from here (its IP allow-list), answered by every guarded field. */
  credentialRefused?: DomainError;
  services: Services;
  loaders: Loaders;
  /**
   * Starts new loaders: a subscription's context lives as long as the subscription, and each
   * event must see the records as they are now, not as the first event cached them. Contexts
   * built by hand for a schema alone (no loaders to renew) may leave it out.
   */
  renewLoaders?(): void;
  requestId: string;
  /** The caller's address, for per-IP limits on anonymous calls and failed authentications. */
  clientIp: string;
  /** True when the request carried the federation router's shared secret. */
  fromRouter: boolean;
  /** The request's `Idempotency-Key` header, which money-moving mutations honour. */
  idempotencyKey: string | undefined;
  /**
   * The credential as sent, for a domain bound to an upstream (facade mode) that asks it with the
   * caller's own credential. Never logged, stored or echoed.
   */
  credential?: CallerCredential | undefined;
}

/** What the transport (HTTP, WebSocket) tells the context builder about a request. */
export interface RequestFacts {
  credential: string | undefined;
  /** How the credential came (credentialSchemeFrom); absent: as an API key. */
  credentialScheme?: CredentialScheme | undefined;
  requestId: string;
  clientIp: string;
  /** The `User-Agent` header (userAgentOf, domain/audit/request-context.ts), for audit records; absent is none. */
  userAgent: string | null;
  routerSecret?: string | undefined;
  idempotencyKey?: string | undefined;
  /** The browser's `Origin` header, if any: a Connect app's token is used only from its registered origins. */
  origin?: string | undefined;
}

/**
 * Turns a credential string into a principal. API keys today; OAuth tokens plug in beside them.
 * Undefined: not a credential it knows. A DomainError thrown: it could not tell (an upstream that
 * did not answer, facade mode), and every guarded field answers that error.
 */
export type Authenticator = (
  credential: string,
  scheme: CredentialScheme,
  /** The client's address as this gateway saw it: a facade asks its upstream on the client's behalf. */
  clientIp?: string,
) => Promise<Principal | undefined>;

/**
 * The principal of a credential: the first authenticator that recognises it wins, each asked after
 * the one before has answered. (Chained rather than awaited in an async function: every request
 * builds a context, and each async layer cost it promises.)
 */
export function authenticateCredential(
  authenticators: readonly Authenticator[],
  credential: string,
  from = 0,
  scheme: CredentialScheme = 'api-key',
): Promise<Principal | undefined> {
  const authenticate = authenticators[from];
  if (!authenticate) return Promise.resolve(undefined);
  return authenticate(credential, scheme).then(
    (found) => found ?? authenticateCredential(authenticators, credential, from + 1, scheme),
  );
}

type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * The credential of a request: `X-API-KEY` (header names are case-insensitive, and Node lowercases
 * them) or `Authorization: Bearer …` carrying an API key or an access token.
 */
export function credentialFrom(headers: HeaderBag): string | undefined {
  const apiKey = first(headers['x-api-key']);
  if (apiKey && apiKey.trim() !== '') return apiKey.trim();
  const authorization = first(headers['authorization']);
  const match = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/** How credentialFrom found the credential: `X-API-KEY` first, else a bearer token. */
export function credentialSchemeFrom(headers: HeaderBag): CredentialScheme {
  const apiKey = first(headers['x-api-key']);
  return apiKey && apiKey.trim() !== '' ? 'api-key' : 'bearer';
}

/** The `Origin` header a browser sends; absent (a server's call) is undefined. */
export function originFrom(headers: HeaderBag): string | undefined {
  return first(headers['origin']);
}

/** The `Idempotency-Key` header, trimmed; absent or blank is undefined. */
export function idempotencyKeyFrom(headers: HeaderBag): string | undefined {
  const value = first(headers['idempotency-key'])?.trim();
  return value ? value : undefined;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function buildContext(
  services: Services,
  authenticators: readonly Authenticator[],
  facts: RequestFacts,
): Promise<GraphQLContext> {
  if (!facts.credential) return Promise.resolve(contextOf(services, facts, null));
  return contextAuthenticatedFrom(services, authenticators, facts, facts.credential, 0);
}

/**
 * authenticateCredential and the context in one `then` per authenticator asked: the principal's
 * own promise and then the context's cost every request a promise more, each paying a hook with an
 * async-local store in the process.
 */
function contextAuthenticatedFrom(
  services: Services,
  authenticators: readonly Authenticator[],
  facts: RequestFacts,
  credential: string,
  from: number,
): Promise<GraphQLContext> {
  const authenticate = authenticators[from];
  if (!authenticate) return Promise.resolve(contextOf(services, facts, null));
  return authenticate(credential, facts.credentialScheme ?? 'api-key', facts.clientIp).then(
    (found) =>
      found
        ? contextOf(services, facts, found)
        : contextAuthenticatedFrom(services, authenticators, facts, credential, from + 1),
    (error: unknown) => {
      if (error instanceof DomainError) return contextOf(services, facts, null, error);
      throw error;
    },
  );
}

function contextOf(
  services: Services,
  { credential, credentialScheme, requestId, clientIp, userAgent, routerSecret, idempotencyKey, origin }: RequestFacts,
  found: Principal | null,
  unsettled?: DomainError,
): GraphQLContext {
  const refused =
    unsettled ??
    (found && !admittedFrom(found, clientIp)
      ? ipNotAllowed()
      : found && !originAdmitted(found, origin)
        ? originNotAllowed(origin!)
        : undefined);
  // The request's own copy, carrying its audit origin: the authenticated principal may be cached
  // and shared by other requests, so it is never changed.
  const principal = found && !refused ? principalFrom(found, { ip: clientIp, userAgent }) : null;
  const context = new RequestContext(
    principal,
    credential !== undefined && found === null && !unsettled,
    refused,
    services,
    requestId,
    clientIp,
    routerSecretMatches(services.config.ROUTER_SECRET, routerSecret),
    idempotencyKey,
  );
  // Only a facade asks anyone with the credential: the service's own contexts carry none.
  if (credential !== undefined && services.config.GATEWAY_MODE === 'facade')
    context.credential = {
      value: credential,
      scheme: credentialScheme ?? 'api-key',
      clientIp,
      // The request's one deadline and call budget for all its upstream calls.
      allowance: services.upstreamBounds?.allowance(),
    };
  return context;
}

/**
 * The context as a class: Apollo copies each request's context (Object.assign onto an object of the
 * same prototype) before running it, which read a getter defined on the object itself — so the
 * loaders meant to be built on first use were built for every request. A getter on the prototype
 * survives the copy and stays lazy.
 */
class RequestContext implements GraphQLContext {
  /** The loaders once built; renewLoaders drops them. */
  private built: Loaders | undefined = undefined;
  declare credentialRefused?: DomainError;
  declare credential?: CallerCredential;

  constructor(
    readonly principal: Principal | null,
    readonly credentialRejected: boolean,
    refused: DomainError | undefined,
    readonly services: Services,
    readonly requestId: string,
    readonly clientIp: string,
    readonly fromRouter: boolean,
    readonly idempotencyKey: string | undefined,
  ) {
    if (refused) this.credentialRefused = refused;
  }

  // Built on first use: many operations never batch anything.
  get loaders(): Loaders {
    this.built ??= createLoaders(this.services, this.principal);
    return this.built;
  }

  renewLoaders(): void {
    this.built = undefined;
  }
}

function routerSecretMatches(expected: string | undefined, given: string | undefined): boolean {
  if (!expected || !given) return false;
  return safeEqual(expected, given);
}

/** The router's secret header of a request, if any. */
export function routerSecretFrom(headers: HeaderBag): string | undefined {
  return first(headers['x-router-secret']);
}

/** False when the principal is an API key with an IP allow-list that does not list the address. */
export function admittedFrom(principal: Principal, clientIp: string): boolean {
  return !principal.ipAllowList || principal.ipAllowList.admits(clientIp);
}

/** The refusal names the rule, never the list or the address it saw. */
export const ipNotAllowed = () =>
  new DomainError('IP_NOT_ALLOWED', "This API key may not be used from this address (the key's IP allow-list).");

/**
 * False when the principal is a Connect app's token, the app registered browser origins, and the
 * request came from a browser page of another origin. A request without an Origin (a server's) and
 * an app without origins pass: CORS_ORIGINS then decides what a browser may read, as for keys.
 */
export function originAdmitted(principal: Principal, origin: string | undefined): boolean {
  const allowed = principal.app?.allowedOrigins;
  return origin === undefined || !allowed?.length || allowed.includes(origin);
}

/** Names the origin the browser sent (the caller's own page), never the app's list. */
export const originNotAllowed = (origin: string) =>
  new DomainError(
    'ORIGIN_NOT_ALLOWED',
    `This Connect app's tokens may not be used from ${origin.slice(0, 200)}: it is not one of the app's registered origins.`,
  );
