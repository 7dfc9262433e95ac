import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isProduction } from '../config.js';
import { SESSION_TTL_MS } from '../domain/accounts/account-service.js';
import type { SessionRecord } from '../domain/accounts/account-store.js';
import { isInternal, toDomainError } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';
import type { User } from '../domain/users/user.js';
import { registerPages } from '../http/security-headers.js';
import type { Services } from '../services.js';
import { html } from './html.js';
import { page } from './layout.js';

export const SESSION_COOKIE = 'pgw_session';

export interface SignedInAccount {
  session: SessionRecord;
  user: User;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person on browser pages, from the session cookie. */
    account: SignedInAccount | undefined;
  }
}

/**
 * The scope of browser pages (accounts, dashboard, the Connect consent page): helmet's headers,
 * cookies, form bodies, CSRF tokens bound to the session, the signed-in account on the request,
 * and errors rendered as pages rather than JSON.
 */
export async function registerWebPages(
  app: FastifyInstance,
  services: Services,
  routes: (scope: FastifyInstance) => Promise<void> | void,
): Promise<void> {
  await registerPages(app, async (scope) => {
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
    await scope.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure: isProduction(services.config) },
      // Binds each token to the session, so a token planted from elsewhere (cookie tossing) fails.
      getUserInfo: (request) => request.account?.session.id ?? 'anonymous',
      csrfOpts: { hmacKey: services.secrets.deriveKey('csrf-tokens') },
    });
    scope.decorateRequest('account', undefined);
    scope.addHook('preValidation', async (request) => {
      request.account = await services.accounts.sessionOf(request.cookies[SESSION_COOKIE]);
    });
    scope.setErrorHandler((error: FastifyError, request, reply) => renderError(error, request, reply));
    await routes(scope);
  });
}

/** A CSRF token for a form on this page, bound to the current session. */
export function csrfTokenFor(request: FastifyRequest, reply: FastifyReply): string {
  return reply.generateCsrf({ userInfo: request.account?.session.id ?? 'anonymous' });
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https' || isProduction(request.server.services.config),
    maxAge: SESSION_TTL_MS / 1000,
  });
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

/** Sends a page. */
export function sendPage(reply: FastifyReply, body: string, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

function renderError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  let status: number;
  let message: string;
  if (error.code?.startsWith('FST_CSRF')) {
    status = 403;
    message = 'This form expired or did not come from this site. Go back, reload the page and try again.';
  } else if (!(error instanceof DomainError) && error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    status = error.statusCode;
    message = error.message;
  } else {
    const domain = toDomainError(error);
    status = domain.status;
    message = isInternal(domain) ? 'Something went wrong on our side. Try again in a moment.' : domain.message;
    if (isInternal(domain)) request.log.error({ err: error }, 'unhandled error on a page');
  }
  const body = html`<div class="card narrow"><h1>${status === 404 ? 'Not found' : 'Something is not right'}</h1><div class="notice error" id="error">${message}</div><p><a href="/dashboard">Back to the dashboard</a></p></div>`;
  return sendPage(reply, page({ title: 'Error', body }), status);
}
