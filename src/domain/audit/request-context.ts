/** Who acts, as an audit record names them. */
export interface AuditActor {
  /**
   * `anonymous`: a request without a credential (e.g. a password reset by emailed link);
   * `system`: no request at all (the admin CLI, a job).
   */
  kind: 'api_key' | 'oauth_token' | 'session' | 'anonymous' | 'system';
  /** The key's, token's or session's id; null for anonymous and system. */
  id: string | null;
}

/** Where a change comes from: the request being served (absent in the admin CLI and jobs). */
export interface AuditOrigin {
  ip: string | null;
  userAgent: string | null;
  /** Who acts, when no principal says it (a dashboard session's account flows, a consent). */
  actor?: AuditActor;
}

/*
 * The origin travels explicitly: on the request's principal (Principal.origin, set where the
 * request's principal is built: the GraphQL context, the dashboard's view) or as an argument of
 * the audited call (flows without a principal). No async-local state: an AsyncLocalStorage store
 * costs every promise of every request a hook.
 */

type HeaderBag = Record<string, string | string[] | undefined>;

/** A request's `User-Agent` header; absent (or repeated, which no browser sends) is null. */
export function userAgentOf(headers: HeaderBag): string | null {
  const agent = headers['user-agent'];
  return typeof agent === 'string' ? agent : null;
}

/** The audit origin of an HTTP request (a FastifyRequest fits), acting as `actor` when given. */
export function originOf(request: { ip: string; headers: HeaderBag }, actor?: AuditActor): AuditOrigin {
  const origin: AuditOrigin = { ip: request.ip, userAgent: userAgentOf(request.headers) };
  if (actor) origin.actor = actor;
  return origin;
}
