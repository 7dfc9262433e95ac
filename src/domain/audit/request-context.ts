import { currentScope, enterOrigin } from '../../db/pool-routing.js';

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
  actor?: AuditActor;
}

/*
 * The origin rides in the pool router's async store (pool-routing.ts), one store per request: an
 * HTTP request enters both at once there (enterHttpRequest).
 */

/** Sets the current work's origin (the HTTP server enters it with the request's pool instead). */
export function enterRequest(origin: AuditOrigin): void {
  enterOrigin(origin);
}

/** Records who the request authenticated as, once known (credential or dashboard session). */
export function identifyActor(actor: AuditActor): void {
  const origin = currentScope()?.origin;
  if (origin) origin.actor = actor;
}

export function currentOrigin(): AuditOrigin | undefined {
  return currentScope()?.origin;
}
