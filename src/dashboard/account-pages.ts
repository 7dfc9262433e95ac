import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { originOf } from '../domain/audit/request-context.js';
import { DomainError } from '../domain/errors.js';
import type { LimitRule } from '../domain/limits/rate-limiter.js';
import { csrfField, field, type Form, formFields, html, notice, type SafeHtml } from '../web/html.js';
import { page } from '../web/layout.js';
import { clearSessionCookie, csrfTokenFor, sendPage, setSessionCookie } from '../web/pages-plugin.js';

/** Guessing passwords: per address and per email, through the shared limiter. */
const SIGN_IN_PER_IP: LimitRule = {
  name: 'sign-in-ip',
  max: 30,
  windowMs: 60_000,
  message: 'Too many sign-in attempts from this address. Wait a minute and try again.',
};
const SIGN_IN_PER_EMAIL: LimitRule = {
  name: 'sign-in-email',
  max: 10,
  windowMs: 60_000,
  message: 'Too many sign-in attempts for this email. Wait a minute and try again.',
};
/** Mail sent on request (verification, reset): per address, so nobody floods an inbox. */
const MAIL_REQUESTS: LimitRule = {
  name: 'account-mail',
  max: 10,
  windowMs: 60_000,
  message: 'Too many requests for mail from this address. Wait a minute and try again.',
};

/** Where to go after signing in: only a path on this site (never `//host` or another origin). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : '/dashboard';
}

const card = (title: string, body: SafeHtml | string) => html`<div class="card narrow"><h1>${title}</h1>${body}</div>`;

/** Sign-up, email verification, sign-in and -out, and password reset. */
export function registerAccountPages(app: FastifyInstance): void {
  const { accounts, rateLimiter } = app.services;
  const show = (request: FastifyRequest, reply: FastifyReply, title: string, body: SafeHtml, status = 200) =>
    sendPage(reply, page({ title, body: card(title, body) }), status);

  const signUpForm = (
    request: FastifyRequest,
    reply: FastifyReply,
    form: Record<string, string | undefined> = {},
    error?: string,
    status = 200,
  ) =>
    show(
      request,
      reply,
      'Create your account',
      html`${notice(error, 'error')}<form method="post" action="/signup">${csrfField(csrfTokenFor(request, reply))}
${field('Email', 'email', { type: 'email', value: form.email, autocomplete: 'email' })}
${field('Password', 'password', { type: 'password', autocomplete: 'new-password', hint: 'At least 10 characters.' })}
${field('First name', 'firstName', { value: form.firstName, required: false })}${field('Last name', 'lastName', { value: form.lastName, required: false })}
<button id="sign-up">Create account</button></form><p class="muted">Already registered? <a href="/signin">Sign in</a></p>`,
      status,
    );

  app.get('/signup', (request, reply) => signUpForm(request, reply));
  app.post<{ Body: Form }>('/signup', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form = formFields(request.body);
    await rateLimiter.consume(MAIL_REQUESTS, request.ip);
    try {
      const { email } = await accounts.signUp({
        email: form.email ?? '',
        password: form.password ?? '',
        firstName: form.firstName,
        lastName: form.lastName,
      });
      return show(
        request,
        reply,
        'Check your email',
        html`<p id="check-email">We sent a message to <strong>${email}</strong>. Open its link to confirm your address, then sign in.</p>`,
        201,
      );
    } catch (error) {
      if (error instanceof DomainError && error.status < 500)
        return signUpForm(request, reply, form, error.message, error.status);
      throw error;
    }
  });

  // The link shows a button rather than acting on GET: mail scanners that prefetch links cannot use it up.
  app.get<{ Querystring: Form }>('/verify-email', (request, reply) =>
    show(
      request,
      reply,
      'Confirm your email',
      html`<form method="post" action="/verify-email">${csrfField(csrfTokenFor(request, reply))}<input type="hidden" name="token" value="${formFields(request.query).token ?? ''}"><button id="confirm-email">Confirm my email</button></form>`,
    ),
  );
  app.post<{ Body: Form }>('/verify-email', { preHandler: app.csrfProtection }, async (request, reply) => {
    await accounts.verifyEmail(formFields(request.body).token ?? '');
    return show(
      request,
      reply,
      'Email confirmed',
      html`<p id="verified">Your email is confirmed. <a href="/signin">Sign in</a>.</p>`,
    );
  });

  const signInForm = (
    request: FastifyRequest,
    reply: FastifyReply,
    form: Record<string, string | undefined> = {},
    error?: string,
    status = 200,
    unverified = false,
  ) =>
    show(
      request,
      reply,
      'Sign in',
      html`${notice(error, 'error')}<form method="post" action="/signin">${csrfField(csrfTokenFor(request, reply))}
<input type="hidden" name="next" value="${safeNext(form.next)}">
${field('Email', 'email', { type: 'email', value: form.email, autocomplete: 'email' })}${field('Password', 'password', { type: 'password', autocomplete: 'current-password' })}
<button id="sign-in">Sign in</button></form>
${unverified ? html`<form method="post" action="/verify-email/resend">${csrfField(csrfTokenFor(request, reply))}<input type="hidden" name="email" value="${form.email ?? ''}"><button class="secondary">Send the confirmation link again</button></form>` : ''}
<p class="muted"><a href="/forgot-password">Forgot your password?</a> · <a href="/signup">Create an account</a></p>`,
      status,
    );

  app.get<{ Querystring: Form }>('/signin', (request, reply) => {
    if (request.account) return reply.redirect(safeNext(formFields(request.query).next));
    return signInForm(request, reply, { next: formFields(request.query).next });
  });
  app.post<{ Body: Form }>('/signin', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form = formFields(request.body);
    try {
      await rateLimiter.consume(SIGN_IN_PER_IP, request.ip);
      await rateLimiter.consume(SIGN_IN_PER_EMAIL, (form.email ?? '').trim().toLowerCase());
      const signedIn = await accounts.signIn(form.email ?? '', form.password ?? '');
      if (request.account) await accounts.signOut(request.account.session.id);
      setSessionCookie(request, reply, signedIn.token);
      return reply.redirect(safeNext(form.next), 303);
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      if (error.code === 'RATE_LIMITED') reply.header('retry-after', String(error.retryAfter ?? 60));
      return signInForm(request, reply, form, error.message, error.status, error.code === 'FORBIDDEN');
    }
  });
  app.post<{ Body: Form }>('/verify-email/resend', { preHandler: app.csrfProtection }, async (request, reply) => {
    await rateLimiter.consume(MAIL_REQUESTS, request.ip);
    await accounts.resendVerification(formFields(request.body).email ?? '');
    return show(
      request,
      reply,
      'Check your email',
      html`<p id="check-email">If that account is waiting for confirmation, a new link is on its way.</p>`,
    );
  });

  app.post('/signout', { preHandler: app.csrfProtection }, async (request, reply) => {
    if (request.account) await accounts.signOut(request.account.session.id);
    clearSessionCookie(reply);
    return reply.redirect('/signin', 303);
  });

  app.get('/forgot-password', (request, reply) =>
    show(
      request,
      reply,
      'Reset your password',
      html`<form method="post" action="/forgot-password">${csrfField(csrfTokenFor(request, reply))}${field('Email', 'email', { type: 'email', autocomplete: 'email' })}<button id="send-reset">Email me a reset link</button></form>`,
    ),
  );
  app.post<{ Body: Form }>('/forgot-password', { preHandler: app.csrfProtection }, async (request, reply) => {
    await rateLimiter.consume(MAIL_REQUESTS, request.ip);
    await accounts.requestPasswordReset(formFields(request.body).email ?? '');
    return show(
      request,
      reply,
      'Check your email',
      html`<p id="check-email">If an account uses that email, we sent it a link to choose a new password. The link works once, for an hour.</p>`,
    );
  });

  const resetForm = (request: FastifyRequest, reply: FastifyReply, token: string, error?: string, status = 200) =>
    show(
      request,
      reply,
      'Choose a new password',
      html`${notice(error, 'error')}<form method="post" action="/reset-password">${csrfField(csrfTokenFor(request, reply))}<input type="hidden" name="token" value="${token}">
${field('New password', 'password', { type: 'password', autocomplete: 'new-password', hint: 'At least 10 characters. Every signed-in session ends.' })}<button id="reset-password">Set password</button></form>`,
      status,
    );
  app.get<{ Querystring: Form }>('/reset-password', (request, reply) =>
    resetForm(request, reply, formFields(request.query).token ?? ''),
  );
  app.post<{ Body: Form }>('/reset-password', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form = formFields(request.body);
    try {
      await accounts.resetPassword(form.token ?? '', form.password ?? '', originOf(request));
    } catch (error) {
      if (error instanceof DomainError && error.status < 500)
        return resetForm(request, reply, form.token ?? '', error.message, error.status);
      throw error;
    }
    clearSessionCookie(reply);
    return show(
      request,
      reply,
      'Password changed',
      html`<p id="password-changed">Your password is changed. <a href="/signin">Sign in</a> with it.</p>`,
    );
  });
}
