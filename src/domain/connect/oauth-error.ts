/**
 * An OAuth protocol error (RFC 6749 §5.2 and §4.1.2.1): `error` is the OAuth code a client
 * branches on, `status` the HTTP status when it is answered directly rather than redirected.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/** DESIGN §4: RFC 6749's fields, plus the seed's statusCode and message. */
export function oauthErrorBody(error: OAuthError) {
  return {
    error: error.error,
    error_description: error.description,
    statusCode: error.status,
    message: error.description,
  };
}
