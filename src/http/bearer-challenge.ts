import type { DomainError } from '../domain/errors.js';
import { credentialFrom } from '../graphql/context.js';

/** The protection space of every API credential (API keys and Connect access tokens alike). */
const REALM = 'partner-gateway';

type HeaderBag = Record<string, string | string[] | undefined>;

/** RFC 6750 §3: an attribute value is a quoted string of printable ASCII without `"` or `\`. */
const quoted = (text: string) => `"${text.replace(/[^\x20-\x7e]|["\\]/g, '')}"`;

/**
 * The `WWW-Authenticate` challenge (RFC 6750 §3) of an API answer refusing a credential: on a 401,
 * `Bearer realm=…`, with `error="invalid_token"` when a credential was sent (none sent: no error
 * code, as §3.1 asks); on a 403 for a missing permission, `error="insufficient_scope"` and the
 * scope that would allow the operation. Other errors, and other 403s (an IP allow-list, a payout
 * limit), carry none.
 */
export function bearerChallenge(error: DomainError, headers: HeaderBag): string | undefined {
  if (error.code === 'UNAUTHENTICATED') {
    if (!credentialFrom(headers)) return `Bearer realm="${REALM}"`;
    return `Bearer realm="${REALM}", error="invalid_token", error_description=${quoted(error.message)}`;
  }
  if (error.code === 'FORBIDDEN' && error.scope !== undefined)
    return `Bearer realm="${REALM}", error="insufficient_scope", error_description=${quoted(error.message)}, scope=${quoted(error.scope)}`;
  return undefined;
}

/** The paths whose credential refusals carry the challenge: REST v1 and GraphQL over HTTP. */
export const isApiPath = (url: string) => url.startsWith('/api/') || url === '/graphql' || url.startsWith('/graphql?');
