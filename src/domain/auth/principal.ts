import type { AuditOrigin } from '../audit/request-context.js';
import type { GraphQLAccess } from '../graphql-access/graphql-access.js';
import type { IpAllowList } from './ip-allow-list.js';
import type { Ability, Environment } from './permissions.js';

/**
 * Who is calling, whatever the credential. API keys build one today; OAuth access tokens build
 * the same shape, so resolvers and services never look at how the caller authenticated.
 */
export interface Principal {
  /** `session`: a person signed in to the dashboard, acting in the environment they picked. */
  kind: 'api_key' | 'oauth_token' | 'session';
  /** The key's or token's id: what rate limits and audit logs are keyed by. */
  credentialId: string;
  /** The user this credential acts for. */
  userId: string;
  environment: Environment;
  abilities: ReadonlySet<Ability>;
  /** An API key's IP allow-list, when it has one: requests from elsewhere are refused. */
  ipAllowList?: IpAllowList;
  /**
   * The key's or the Connect app's own GraphQL settings (trusted documents only, its cost and depth
   * limits), when any is set; an OAuth token carries its app's. Absent: the gateway's defaults.
   */
  graphql?: GraphQLAccess;
  /** An OAuth token's app: its id and the browser origins it may be used from (empty: CORS_ORIGINS decides). */
  app?: { id: string; allowedOrigins: readonly string[] };
  /**
   * Where the request acting as this principal came from; for audit records. Set on the request's
   * own copy (an authenticated principal may be cached and shared by many requests: never on it).
   */
  origin?: AuditOrigin;
}

/**
 * A request's own copy of a (cached, shared) principal, carrying the request's audit origin. Every
 * field is named rather than spread: `{ ...principal, origin }` on every request made a cached REST
 * `me` cost a fifth more CPU in the gateway (127 → 102 µs in an A/B run, docs/benchmarks.md "REST near raw"),
 * and the mapped type below makes a field added to Principal a compile error here, not a field lost.
 */
export function principalFrom(principal: Principal, origin: AuditOrigin): Principal {
  const copy: { [K in keyof Required<Principal>]: Principal[K] } = {
    kind: principal.kind,
    credentialId: principal.credentialId,
    userId: principal.userId,
    environment: principal.environment,
    abilities: principal.abilities,
    ipAllowList: principal.ipAllowList,
    graphql: principal.graphql,
    app: principal.app,
    origin,
  };
  return copy;
}

/** True when the principal may act for the given user. Grows with business delegation later. */
export function mayActFor(principal: Principal, userId: string): boolean {
  return principal.userId === userId;
}
