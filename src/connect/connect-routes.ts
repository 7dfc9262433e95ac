import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Config, isProduction, publicUrlOf } from '../config.js';
import { originOf } from '../domain/audit/request-context.js';
import type { AuthorizeParameters } from '../domain/connect/authorization-server.js';
import { OAuthError, oauthErrorBody } from '../domain/connect/oauth-error.js';
import { SCOPE_NAMES } from '../domain/connect/scopes.js';
import { restErrorReply } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';
import type { LimitRule } from '../domain/limits/rate-limiter.js';
import type { Services } from '../services.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';
import { csrfTokenFor, sendPage } from '../web/pages-plugin.js';
import { consentPage } from './consent-page.js';

/** How long the consent page's approval stays valid. */
export const CONSENT_TTL_MS = 10 * 60_000;

type Params = Record<string, string | undefined>;

/**
 * A request's OAuth parameters. RFC 6749 §3.1 and §3.2: a parameter must not appear more than
 * once; a repeated one is refused rather than guessed at (and never reaches code expecting text).
 */
function oauthParams(source: unknown): Params {
  const params: Params = {};
  for (const [key, value] of Object.entries((source ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `${key} was sent more than once.`);
    if (typeof value === 'string') params[key] = value;
  }
  return params;
}

/** A Host header that is a host name, IPv4 or bracketed IPv6 address, with an optional port. */
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The issuer (RFC 8414 §2, RFC 9207's `iss`) as a request sees it: `PUBLIC_URL` when set, and
 * always in production. In development without it, the origin the request reached: a strict
 * client compares the metadata's issuer with the URL it discovered from, and to it
 * `http://127.0.0.1:4000` and `http://localhost:4000` are two different servers.
 */
export function issuerFor(config: Config, request: FastifyRequest): string {
  if (config.PUBLIC_URL || isProduction(config) || !PLAIN_HOST.test(request.host)) return publicUrlOf(config);
  return `${request.protocol}://${request.host}`;
}

interface ConsentTicket {
  params: AuthorizeParameters;
  expiresAt: number;
}

/** What the limits count per: the client named in the request, and the caller's address. */
async function limit(
  services: Services,
  rule: LimitRule,
  request: FastifyRequest,
  clientId: string | undefined,
): Promise<void> {
  await services.rateLimiter.consume(rule, `ip:${request.ip}`);
  if (clientId) await services.rateLimiter.consume(rule, `client:${clientId.slice(0, 100)}`);
}

function rules(services: Services) {
  const perMinute = (name: string, max: number): LimitRule => ({
    name,
    max,
    windowMs: 60_000,
    message: `Too many requests to this endpoint: at most ${max} per minute.`,
  });
  return {
    authorizeGet: perMinute('connect-authorize-get', services.config.CONNECT_AUTHORIZE_PER_MINUTE),
    authorizePost: perMinute('connect-authorize-post', services.config.CONNECT_AUTHORIZE_PER_MINUTE),
    token: perMinute('connect-token', services.config.CONNECT_TOKEN_PER_MINUTE),
    revoke: perMinute('connect-revoke', services.config.CONNECT_TOKEN_PER_MINUTE),
  };
}

/** Sends an OAuth or rate-limit error: JSON for programs, a page for people on the authorize endpoints. */
function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown, asPage = false) {
  if (error instanceof DomainError && error.code === 'RATE_LIMITED') {
    // The seed's rate-limit body, with RFC 6749 §5.2's fields beside it: an OAuth client reads any
    // error answer of these endpoints as an OAuth error body, and one without `error` as malformed.
    const { status, headers, body } = restErrorReply(error);
    return reply
      .code(status)
      .headers(headers)
      .header('cache-control', 'no-store')
      .send({ error: 'temporarily_unavailable', error_description: error.message, ...body });
  }
  const oauth =
    error instanceof OAuthError
      ? error
      : (error as FastifyError).statusCode === 400 || (error as FastifyError).statusCode === 415
        ? new OAuthError('invalid_request', `The request could not be read: ${(error as Error).message}`)
        : undefined;
  if (!oauth) {
    request.log.error({ err: error }, 'connect endpoint failed');
    return reply
      .code(500)
      .send(oauthErrorBody(new OAuthError('server_error', 'Something went wrong on our side.', 500)));
  }
  if (oauth.error === 'invalid_client' && request.headers.authorization?.startsWith('Basic '))
    reply.header('www-authenticate', 'Basic realm="connect"');
  if (asPage && (request.headers.accept ?? '').includes('text/html')) {
    return sendPage(
      reply,
      page({
        title: 'Cannot connect',
        body: html`<div class="card narrow"><h1>This app cannot connect</h1><div class="notice error" id="error">${oauth.description}</div></div>`,
      }),
      oauth.status,
    );
  }
  return reply.code(oauth.status).header('cache-control', 'no-store').send(oauthErrorBody(oauth));
}

/**
 * CSP's form-action also governs where a form's answer may redirect, and the consent form's
 * answer redirects to the app: its origin joins 'self' on this page only.
 */
function allowFormRedirectTo(reply: FastifyReply, redirectUri: string): void {
  const csp = reply.getHeader('content-security-policy');
  if (typeof csp !== 'string') return;
  reply.header(
    'content-security-policy',
    csp.replace(/form-action [^;]*/, `form-action 'self' ${new URL(redirectUri).origin}`),
  );
}

function redirectWith(reply: FastifyReply, uri: string, values: Record<string, string | undefined>) {
  const target = new URL(uri);
  for (const [key, value] of Object.entries(values)) if (value !== undefined) target.searchParams.set(key, value);
  return reply.redirect(target.toString(), 302);
}

/** GET and POST /connect/authorize: browser pages, inside the pages scope (cookies, CSRF, helmet). */
export function registerAuthorizeEndpoints(app: FastifyInstance): void {
  const { services } = app;
  const { authorizationServer, secrets, clock } = services;
  const limits = rules(services);
  const binding = (sessionId: string) => `connect-consent:${sessionId}`;

  app.get('/connect/authorize', async (request, reply) => {
    try {
      const query = oauthParams(request.query);
      await limit(services, limits.authorizeGet, request, query.client_id);
      const check = await authorizationServer.checkAuthorizeRequest(query);
      if (!check.ok) {
        if (!check.redirectTo) throw check.error;
        return redirectWith(reply, check.redirectTo.uri, {
          error: check.error.error,
          error_description: check.error.description,
          state: check.redirectTo.state,
          iss: issuerFor(services.config, request),
        });
      }
      if (!request.account) return reply.redirect(`/signin?next=${encodeURIComponent(request.url)}`, 302);
      const ticket: ConsentTicket = { params: query, expiresAt: clock.now().getTime() + CONSENT_TTL_MS };
      const sealed = secrets.seal(JSON.stringify(ticket), binding(request.account.session.id));
      allowFormRedirectTo(reply, check.request.redirectUri);
      return sendPage(reply, consentPage(check.request, request.account.user, sealed, csrfTokenFor(request, reply)));
    } catch (error) {
      return sendError(request, reply, error, true);
    }
  });

  app.post('/connect/authorize', async (request, reply) => {
    try {
      const form = oauthParams(request.body);
      await limit(services, limits.authorizePost, request, form.client_id);
      // The consent session is the sign-in session plus the page's ticket: either gone is a 401.
      if (!request.account)
        throw new OAuthError(
          'access_denied',
          'The consent session expired or you are signed out: start again from the app.',
          401,
        );
      await new Promise<void>((resolve, reject) =>
        app.csrfProtection(request, reply, (error?: Error) => (error ? reject(error) : resolve())),
      );
      let ticket: ConsentTicket;
      try {
        ticket = JSON.parse(secrets.open(form.consent ?? '', binding(request.account.session.id))) as ConsentTicket;
      } catch {
        throw new OAuthError(
          'access_denied',
          'The consent session is not valid for this sign-in: start again from the app.',
          401,
        );
      }
      if (ticket.expiresAt <= clock.now().getTime())
        throw new OAuthError(
          'access_denied',
          'The consent session expired (10 minutes): start again from the app.',
          401,
        );
      // Checked again: the app or its redirect URIs may have changed since the page was shown.
      const check = await authorizationServer.checkAuthorizeRequest(ticket.params);
      if (!check.ok) throw check.error;
      const { redirectUri, state } = check.request;
      if (form.decision !== 'approve')
        return redirectWith(reply, redirectUri, {
          error: 'access_denied',
          error_description: 'The user denied access.',
          state,
          iss: issuerFor(services.config, request),
        });
      const code = await authorizationServer.issueCode(
        check.request,
        request.account.user.id,
        originOf(request, { kind: 'session', id: request.account.session.id }),
      );
      return redirectWith(reply, redirectUri, { code, state, iss: issuerFor(services.config, request) });
    } catch (error) {
      if ((error as FastifyError).code?.startsWith('FST_CSRF')) throw error;
      return sendError(request, reply, error, true);
    }
  });
}

/** Client credentials from HTTP Basic (RFC 6749 §2.3.1, form-encoded parts) or the body; never both. */
function clientCredentials(
  request: FastifyRequest,
  body: Params,
): { clientId?: string | undefined; clientSecret?: string | undefined } {
  const header = request.headers.authorization;
  if (header?.startsWith('Basic ')) {
    if (body.client_secret)
      throw new OAuthError('invalid_request', 'Send the client credentials one way only (Basic or the body).');
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials.');
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    try {
      return { clientId: decode(decoded.slice(0, colon)), clientSecret: decode(decoded.slice(colon + 1)) };
    } catch {
      throw new OAuthError('invalid_client', 'Malformed Basic credentials.');
    }
  }
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

/** POST /connect/token, POST /connect/revoke and the RFC 8414 metadata: JSON or form bodies, OAuth errors. */
export async function registerTokenEndpoints(app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    const { services } = app;
    const { authorizationServer, oauthClients } = services;
    const limits = rules(services);
    await scope.register(formbody, { bodyLimit: 16 * 1024 });
    scope.setErrorHandler((error, request, reply) => sendError(request, reply, error));

    scope.post('/connect/token', async (request, reply) => {
      const body = oauthParams(request.body);
      const credentials = clientCredentials(request, body);
      await limit(services, limits.token, request, credentials.clientId);
      const client = await oauthClients.authenticate(credentials.clientId, credentials.clientSecret);
      let tokens: Awaited<ReturnType<typeof authorizationServer.refresh>>;
      if (body.grant_type === 'authorization_code') {
        tokens = await authorizationServer.redeemCode(client, {
          code: body.code,
          redirectUri: body.redirect_uri,
          codeVerifier: body.code_verifier,
        });
      } else if (body.grant_type === 'refresh_token') {
        tokens = await authorizationServer.refresh(client, { refreshToken: body.refresh_token, scope: body.scope });
      } else {
        throw new OAuthError(
          body.grant_type ? 'unsupported_grant_type' : 'invalid_request',
          body.grant_type
            ? `grant_type "${body.grant_type}" is not supported: use authorization_code or refresh_token.`
            : 'grant_type is required.',
        );
      }
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
    });

    scope.post('/connect/revoke', async (request, reply) => {
      const body = oauthParams(request.body);
      const credentials = clientCredentials(request, body);
      await limit(services, limits.revoke, request, credentials.clientId);
      const client = await oauthClients.authenticate(credentials.clientId, credentials.clientSecret);
      await authorizationServer.revoke(client, body.token);
      return reply.code(200).header('cache-control', 'no-store').send();
    });

    scope.get('/.well-known/oauth-authorization-server', async (request) => {
      const issuer = issuerFor(services.config, request);
      return {
        issuer,
        authorization_endpoint: `${issuer}/connect/authorize`,
        token_endpoint: `${issuer}/connect/token`,
        revocation_endpoint: `${issuer}/connect/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        scopes_supported: SCOPE_NAMES,
        authorization_response_iss_parameter_supported: true,
      };
    });
  });
}
